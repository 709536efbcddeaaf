// Benchmarks of live change notifications (npm run bench, or npm run bench:live alone), all on 127.0.0.1:
//  1. latency: the fixture Source changes a resource, its hub signs and delivers the notification, the engine
//     stores it durably, answers, reads and orders it and puts the `notification` event on its stream; 1,000 times
//     one after another; p50 and p99 from the change to the event (resource fetch excluded: apply off).
//     Target p99 <= 100 ms.
//  2. burst: 1,000 signed notifications (consecutive intervals, one change each) POSTed as fast as 64 connections
//     carry them (opened during the burst, as a hub starting to deliver would), at >= 1,000/s; every one must be
//     answered 2xx, stored, read and applied (apply on: the changes name resources the mirror already holds with
//     their hashes, so the mirror's apply path runs without fetching).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { startFixtureSource, type FixtureSource } from '../e2e/fixture-source/index.ts';
import { LiveEngine } from '../src-main/engine/live/engine.ts';
import type { LiveEvent } from '../src-main/engine/live/model.ts';
import { signBody } from '../src-main/engine/live/signature.ts';
import { sync } from '../src-main/engine/mirror/sync.ts';

export const LIVE_TARGETS = { p99Ms: 100, burstPerSecond: 1_000 } as const;
const N = 1_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function waitForEvent(engine: LiveEngine, test: (e: LiveEvent) => boolean, ms = 10_000): Promise<LiveEvent> {
  return new Promise((res, rej) => {
    const timer = setTimeout(() => (off(), rej(new Error('timed out waiting for an event'))), ms);
    const off = engine.events.on((e) => {
      if (test(e)) {
        clearTimeout(timer);
        off();
        res(e);
      }
    });
  });
}

async function setUp(apply: boolean): Promise<{ fixture: FixtureSource; engine: LiveEngine; dest: string; subId: number; callback: string; secret: string }> {
  const fixture = await startFixtureSource({ resources: 50, changeListSize: 100_000 });
  const dest = mkdtempSync(join(tmpdir(), 'live-bench-'));
  await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest });
  const engine = new LiveEngine({ port: 0, reorderWaitMs: 5_000 });
  await engine.start();
  engine.openMirror(dest, { apply });
  const subscribed = waitForEvent(engine, (e) => e.type === 'subscribed');
  const sub = await engine.subscribe({ dest, topic: fixture.url + fixture.paths.dataset1.notifications, hub: fixture.url + fixture.paths.hub });
  await subscribed;
  await fixture.hub.settled();
  const row = engine.feed(dest)!.store.subscription(sub.id)!;
  return { fixture, engine, dest, subId: sub.id, callback: row.callbackUrl, secret: row.secret! };
}

export interface LiveBenchResult {
  latency: { p50: number; p99: number; max: number; n: number };
  burst: { sent: number; answered2xx: number; sendSeconds: number; sendRate: number; persisted: number; processed: number; processSeconds: number; processRate: number; gaps: number; statuses: Record<string, number> };
}

export async function runLatency(): Promise<LiveBenchResult['latency']> {
  const rig = await setUp(false);
  const times: number[] = [];
  try {
    for (let i = 0; i < N + 20; i++) {
      const t0 = performance.now();
      const seen = waitForEvent(rig.engine, (e) => e.type === 'notification');
      rig.fixture.change('update');
      await seen;
      // The first 20 warm the JIT and the connection pools.
      if (i >= 20) times.push(performance.now() - t0);
    }
  } finally {
    await rig.engine.stop();
    await rig.fixture.close();
    rmSync(rig.dest, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1], n: times.length };
}

export async function runBurst(): Promise<LiveBenchResult['burst']> {
  const rig = await setUp(true);
  const { fixture, engine } = rig;
  const topic = fixture.url + fixture.paths.dataset1.notifications;
  // Consecutive intervals starting at the subscription's cursor, one change each to a resource the mirror holds.
  const startMs = Date.parse(engine.feed(rig.dest)!.store.subscription(rig.subId)!.cursor!);
  const live = fixture.state.live();
  const payloads = Array.from({ length: N }, (_, i) => {
    const r = live[i % live.length];
    const rep = fixture.state.representation(r.id, r.version);
    const from = new Date(startMs + i * 1000).toISOString();
    const until = new Date(startMs + (i + 1) * 1000).toISOString();
    return Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
        `<rs:md capability="change-notification" from="${from}" until="${until}"/>` +
        `<url><loc>${fixture.state.locOf(r.id)}</loc><rs:md change="updated" datetime="${until}" hash="${rep.hash}" length="${rep.body.length}"/></url></urlset>\n`,
    );
  });
  let processed = 0;
  let gaps = 0;
  let lastProcessed = 0;
  engine.events.on((e) => {
    if (e.type === 'applied') {
      processed += e.inboxIds.length;
      lastProcessed = performance.now();
    }
    if (e.type === 'gap') gaps++;
    if (e.type === 'error') console.log(`  (error event: ${e.message})`);
  });
  const url = new URL(rig.callback);
  const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });
  let answered = 0;
  const t0 = performance.now();
  try {
    await Promise.all(
      payloads.map(async (body) => {
        const res = await pool.request({
          path: url.pathname,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/xml', link: `<${topic}>; rel="self", <${fixture.url}${fixture.paths.hub}>; rel="hub"`, 'x-hub-signature': signBody('sha256', rig.secret, body) },
        });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode <= 299) answered++;
      }),
    );
    const sendSeconds = (performance.now() - t0) / 1000;
    const store = engine.feed(rig.dest)!.store;
    const persisted = Number((store.db.prepare('SELECT COUNT(*) AS n FROM live_inbox').get() as { n: number }).n);
    await engine.idle();
    const processSeconds = (lastProcessed - t0) / 1000;
    const statuses = store.counts(rig.subId);
    if (process.env.LIVE_BENCH_DEBUG) {
      const stuck = store.db.prepare("SELECT id, body FROM live_inbox WHERE status = 'received'").all() as { id: number; body: Uint8Array }[];
      console.log('cursor', store.subscription(rig.subId)!.cursor, 'stuck', stuck.map((r) => [r.id, /from="([^"]+)" until="([^"]+)"/.exec(Buffer.from(r.body).toString())?.slice(1)]));
      const last = store.db.prepare("SELECT id, status, from_at, until_at FROM live_inbox WHERE status != 'received' ORDER BY until_at DESC LIMIT 3").all();
      console.log(last);
    }
    return { sent: N, answered2xx: answered, sendSeconds, sendRate: N / sendSeconds, persisted, processed, processSeconds, processRate: processed / processSeconds, gaps, statuses };
  } finally {
    await pool.close();
    await engine.stop();
    await fixture.close();
    rmSync(rig.dest, { recursive: true, force: true });
  }
}

export async function runLiveBench(): Promise<LiveBenchResult> {
  const ok = (met: boolean) => (met ? 'met' : 'MISSED');
  console.log('Live change notifications (fixture hub → callback server → event stream, 127.0.0.1)');
  const latency = await runLatency();
  console.log(
    `hub delivery → notification event, ${latency.n.toLocaleString('en')} notifications: p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(1)} ms, max ${latency.max.toFixed(1)} ms   target p99 <= ${LIVE_TARGETS.p99Ms} ms: ${ok(latency.p99 <= LIVE_TARGETS.p99Ms)}`,
  );
  const burst = await runBurst();
  // Processed: applied, or dropped as covered after a gap was filled (what a late copy says was applied then).
  const settled = (burst.statuses.applied ?? 0) + (burst.statuses.covered ?? 0);
  const none = burst.answered2xx === N && burst.persisted === N && settled === N;
  console.log(
    `burst of ${N.toLocaleString('en')}: sent in ${burst.sendSeconds.toFixed(2)} s (${Math.round(burst.sendRate).toLocaleString('en')}/s), ${burst.answered2xx} answered 2xx, ${burst.persisted} stored, ` +
      `${burst.processed} applied in ${burst.processSeconds.toFixed(2)} s (${Math.round(burst.processRate).toLocaleString('en')}/s), ${burst.gaps} gaps, inbox ${JSON.stringify(burst.statuses)}   ` +
      `target >= ${LIVE_TARGETS.burstPerSecond}/s, none lost: ${ok(burst.sendRate >= LIVE_TARGETS.burstPerSecond && none)}`,
  );
  return { latency, burst };
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) await runLiveBench();
