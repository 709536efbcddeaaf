// rsdesk sync --json prints every failure of the run, though the run holds only the first of them (the rest are
// read from its journal); a dry run, which records none, lists those it holds and counts the rest. The bound is made
// a few failures here (MAX_KEPT_FAILURES otherwise).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import type { Io } from './io.ts';
import { main } from './rsdesk.ts';

vi.mock('../engine/mirror/sync.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../engine/mirror/sync.ts')>();
  return { ...original, sync: (o: Parameters<typeof original.sync>[0]) => original.sync({ ...o, keptFailures: 1 }) };
});

let fixture: FixtureSource;
beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 8 });
});
afterAll(async () => {
  await fixture.close();
});

async function rsdesk(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = { out: '', err: '' };
  const sink: Io = { out: (t) => void (io.out += t), err: (t) => void (io.err += t) };
  const code = await main(args, sink);
  return { code, ...io };
}

describe('rsdesk sync --json with more failures than the run holds', () => {
  it('prints them all, in the order the journal has them', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-failures-'));
    // Not those with a mirror location (every fifth), which is tried when their own address fails.
    const broken = [1, 2, 3];
    for (const id of broken) fixture.setBroken(fixture.state.pathOf(id), { status: 404 });
    try {
      const { code, out } = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest, '--json']);
      expect(code).toBe(1);
      const json = JSON.parse(out);
      expect(Object.keys(json)).toEqual(['mode', 'created', 'updated', 'deleted', 'unchanged', 'skipped', 'failed', 'bytes', 'seconds', 'failures']);
      expect(json.failed).toBe(3);
      const state = MirrorState.forReading(stateDirOf(dest));
      try {
        expect(json.failures).toEqual(state.failures(state.runs().at(-1)!.id));
      } finally {
        state.close();
      }
      expect(json.failures.map((f: { uri: string }) => f.uri).sort()).toEqual(broken.map((id) => fixture.state.locOf(id)).sort());
    } finally {
      for (const id of broken) fixture.setBroken(fixture.state.pathOf(id), null);
    }
  });

  it('a dry run lists those it holds and says how many more failed', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-failures-'));
    const host = new URL(fixture.url).host.replace(':', '_');
    for (const id of [1, 2, 3]) {
      const file = join(dest, host, ...fixture.state.pathOf(id).split('/').filter(Boolean));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, 'my own notes');
    }
    const { code, out } = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest, '--dry-run', '--json']);
    expect(code).toBe(1);
    const json = JSON.parse(out);
    expect(json).toMatchObject({ failed: 3, failuresNotListed: 2 });
    expect(json.failures).toEqual([{ uri: expect.any(String), reason: expect.stringMatching(/^a file not made by this mirror is already at /) }]);
    const text = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest, '--dry-run']);
    expect(text.out).toMatch(/\nFailures:\n  [^\n]+: a file not made by this mirror is already at [^\n]+\n  … and 2 more\n/);
  });
});
