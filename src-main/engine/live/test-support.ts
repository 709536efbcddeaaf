// Shared by the live tests: a fixture Source with its hub, a baseline mirror, a started engine, and waiting for
// events (with a deadline, so a missing event fails the test with what did arrive).
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixtureSource, type FixtureSource, type FixtureSourceOptions } from '../../../e2e/fixture-source/index.ts';
import { sync } from '../mirror/sync.ts';
import { LiveEngine, type LiveEngineOptions } from './engine.ts';
import type { LiveEvent } from './model.ts';

export interface Rig {
  fixture: FixtureSource;
  engine: LiveEngine;
  dest: string;
  events: LiveEvent[];
  topic: string;
  hubUrl: string;
  capabilityList: string;
  close(): Promise<void>;
}

export async function startRig(o: { fixture?: FixtureSourceOptions; engine?: LiveEngineOptions; baseline?: boolean } = {}): Promise<Rig> {
  const fixture = await startFixtureSource({ resources: 12, changeListSize: 10, ...o.fixture });
  const dest = mkdtempSync(join(tmpdir(), 'live-'));
  const capabilityList = fixture.url + fixture.paths.dataset1.capabilityList;
  if (o.baseline !== false) await sync({ url: capabilityList, dest, timeoutMs: 5_000 });
  // Leases of a few seconds renew within a test.
  const engine = new LiveEngine({ port: 0, reorderWaitMs: 300, retryBaseMs: 50, verifyTimeoutMs: 5_000, lockRetryMs: 100, minRenewMs: 500, ...o.engine });
  const events: LiveEvent[] = [];
  engine.events.on((e) => events.push(e));
  await engine.start();
  return {
    fixture,
    engine,
    dest,
    events,
    topic: fixture.url + fixture.paths.dataset1.notifications,
    hubUrl: fixture.url + fixture.paths.hub,
    capabilityList,
    async close() {
      await engine.stop();
      await fixture.close();
    },
  };
}

/** Resolves with the first event (already seen or coming) that matches; rejects after `ms` naming what arrived. */
export function waitFor<T extends LiveEvent['type']>(
  rig: Pick<Rig, 'engine' | 'events'>,
  type: T,
  match: (e: Extract<LiveEvent, { type: T }>) => boolean = () => true,
  ms = 10_000,
  after = 0,
): Promise<Extract<LiveEvent, { type: T }>> {
  const test = (e: LiveEvent): e is Extract<LiveEvent, { type: T }> => e.type === type && match(e as Extract<LiveEvent, { type: T }>);
  const seen = rig.events.slice(after).find(test);
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`No ${type} event within ${ms} ms; events: ${rig.events.map((e) => e.type + ('reason' in e ? `(${e.reason})` : 'message' in e ? `(${e.message})` : '')).join(', ')}`));
    }, ms);
    const off = rig.engine.events.on((e) => {
      if (test(e)) {
        clearTimeout(timer);
        off();
        resolve(e);
      }
    });
  });
}

/** The mirror's copy of a fixture resource. */
export function mirrored(rig: Rig, id: number): Buffer | null {
  const host = new URL(rig.fixture.url).host.replace(':', '_');
  try {
    return readFileSync(join(rig.dest, host, ...rig.fixture.state.pathOf(id).split('/').filter(Boolean)));
  } catch {
    return null;
  }
}

export function sourceBytes(rig: Rig, id: number): Buffer {
  const r = rig.fixture.state.resources.get(id)!;
  return rig.fixture.state.representation(r.id, r.version).body;
}

/**
 * Runs `fn` with every HTTP request of this process sent to a proxy on 127.0.0.1 that notes it and answers 502:
 * nothing leaves this computer, even when the code under test would ask an address it must not. `asked` lists
 * "METHOD URL" of each request the proxy got.
 */
export async function throughRecordingProxy<T>(fn: (asked: string[]) => Promise<T>): Promise<T> {
  const asked: string[] = [];
  const proxy = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const saved = { HTTP_PROXY: process.env.HTTP_PROXY, http_proxy: process.env.http_proxy, NO_PROXY: process.env.NO_PROXY, no_proxy: process.env.no_proxy };
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  Object.assign(process.env, { HTTP_PROXY: proxyUrl, http_proxy: proxyUrl, NO_PROXY: '', no_proxy: '' });
  try {
    return await fn(asked);
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
    await new Promise((resolve) => proxy.close(resolve));
  }
}
