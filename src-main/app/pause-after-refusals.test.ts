// The pause after refusals of a mirror (how long its Source may refuse every request of a run before it pauses),
// through the service's dispatch as the Options tab calls it: checked by the contract in plain words, kept in the
// mirror's folder where rsdesk sync --pause-after-refusals keeps it, so that the app and rsdesk read the one value.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import type { CommandName } from '../contract/names.ts';
import type { MirrorDetail } from '../contract/types.ts';
import { readFolder } from '../engine/mirror/folder.ts';
import { sync } from '../engine/mirror/sync.ts';
import { openStore } from '../store/store.ts';
import { createService, type Service } from './service.ts';

let fixture: FixtureSource;
let dir: string;
let service: Service;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 4 });
  dir = mkdtempSync(join(tmpdir(), 'refusal-limit-'));
  service = createService({ store: openStore(join(dir, 'app.sqlite')), adapter: 'http', version: '0.0.0', log: () => undefined });
});
afterEach(async () => {
  await service.close();
  await fixture.close();
});

async function call<T>(command: CommandName, args: unknown): Promise<T> {
  const envelope = await service.dispatch(command, args);
  if (!envelope.ok) throw new Error(envelope.error.message);
  return envelope.result as T;
}
const kept = (path: string) => readFolder(path)!.binding?.settings?.refusalLimitMs ?? null;

it('is set and read back through mirrors.update and mirrors.get, kept in the folder, and refused out of range in plain words', async () => {
  const path = join(dir, 'm');
  await call('mirrors.create', { url: fixture.url + fixture.paths.dataset1.capabilityList, path });
  expect((await call<MirrorDetail>('mirrors.get', { path })).pauseAfterRefusalsSeconds).toBeNull();

  for (const pauseAfterRefusalsSeconds of [0, 1.5, 700_000, '60']) {
    const envelope = await service.dispatch('mirrors.update', { path, pauseAfterRefusalsSeconds });
    expect(envelope.ok).toBe(false);
    expect((envelope as { error: { message: string } }).error.message).toMatch(/^The pause after refusals must be a whole number of seconds from 1 to 604,800 \(a week\)/);
  }
  expect(kept(path)).toBeNull();

  await call('mirrors.update', { path, pauseAfterRefusalsSeconds: 90 });
  expect((await call<MirrorDetail>('mirrors.get', { path })).pauseAfterRefusalsSeconds).toBe(90);
  expect(kept(path)).toBe(90_000);

  // rsdesk changes the same value, and the app reads it.
  await sync({ dest: path, refusalLimitMs: 120_000, proxyEnv: {} });
  expect((await call<MirrorDetail>('mirrors.get', { path })).pauseAfterRefusalsSeconds).toBe(120);

  // Options saved without it leave it; null is the default again.
  await call('mirrors.update', { path, concurrency: 3 });
  expect(kept(path)).toBe(120_000);
  await call('mirrors.update', { path, pauseAfterRefusalsSeconds: null });
  expect((await call<MirrorDetail>('mirrors.get', { path })).pauseAfterRefusalsSeconds).toBeNull();
  expect(kept(path)).toBeNull();
});
