// The check commands through the service's dispatch, as adapters call them, against the fixture Source.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROKEN_SOURCE, PATHS, startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import type { CheckReport, Events } from '../contract/types.ts';
import { openStore } from '../store/store.ts';
import { createService, type Service } from './service.ts';

let fixture: FixtureSource;
let dir: string;
let service: Service;
const progress: { at: number; payload: Events['check.progress'] }[] = [];

beforeAll(async () => {
  fixture = await startFixtureSource({ bigListEntries: 2000 });
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-check-'));
  service = createService({ store: openStore(join(dir, 'db.sqlite')), adapter: 'http', version: '0.0.0', log: () => undefined });
  service.events.subscribe((name, payload) => {
    if (name === 'check.progress') progress.push({ at: Date.now(), payload: payload as Events['check.progress'] });
  });
});

afterAll(async () => {
  await service.close();
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('check.run / check.cancel', () => {
  it('runs a check by runId, with batched progress events, and returns the report', async () => {
    progress.length = 0;
    const began = Date.now();
    const envelope = await service.dispatch('check.run', { url: fixture.url + BROKEN_SOURCE.sourceDescription, runId: 'one' });
    expect(envelope.ok).toBe(true);
    const report = (envelope as { result: CheckReport }).result;
    expect(report.summary).toMatchObject({ documents: 14, errors: 5, warnings: 8 });
    const mine = progress.filter((p) => p.payload.runId === 'one');
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(mine.at(-1)!.payload).toMatchObject({ done: 14, known: 14, current: null });
    // Never one per entry or per document: at most about 5 a second, plus the first and the last.
    expect(mine.length).toBeLessThanOrEqual(2 + Math.ceil((Date.now() - began) / 200));
  });

  it('cancels a running check by runId; the report says so', async () => {
    fixture.setBroken(PATHS.dataset2.resourceListIndex, 'hang');
    try {
      const running = service.dispatch('check.run', { url: `${fixture.url}/`, runId: 'two' });
      // Wait until the walk is under way (the index never answers, so it cannot finish by itself).
      while (!progress.some((p) => p.payload.runId === 'two' && p.payload.done > 0)) await new Promise((r) => setTimeout(r, 20));
      expect(await service.dispatch('check.run', { url: `${fixture.url}/`, runId: 'two' })).toMatchObject({
        ok: false,
        error: { code: 'invalid-arguments' },
      });
      expect(await service.dispatch('check.cancel', { runId: 'two' })).toEqual({ ok: true, result: { cancelled: true } });
      const envelope = await running;
      expect(envelope.ok).toBe(true);
      const report = (envelope as { result: CheckReport }).result;
      expect(report.summary.cancelled).toBe(true);
      expect(report.findings.some((f) => f.code === 'cancelled')).toBe(true);
      expect(await service.dispatch('check.cancel', { runId: 'two' })).toEqual({ ok: true, result: { cancelled: false } });
    } finally {
      fixture.setBroken(PATHS.dataset2.resourceListIndex, null);
    }
  });

  it('refuses bad arguments before anything runs', async () => {
    expect(await service.dispatch('check.run', { url: 'ftp://x', runId: 'r' })).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
    expect(await service.dispatch('check.run', { url: `${fixture.url}/`, runId: 'r', maxDocuments: 0 })).toMatchObject({
      ok: false,
      error: { code: 'invalid-arguments' },
    });
    expect(await service.dispatch('check.cancel', {})).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
  });
});
