// rsdesk watch as a real process against the fixture Source's hub: subscribes, prints one JSON object per line per
// event, applies notifications, unsubscribes on SIGTERM and exits 0; and a crash between receipt and apply (the
// process killed with SIGKILL while the notification waits for the mirror) loses nothing: the next start applies
// the stored notification, once.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { LiveEngine } from '../engine/live/engine.ts';
import type { LiveEvent } from '../engine/live/model.ts';
import { mirrored, sourceBytes, waitFor } from '../engine/live/test-support.ts';
import { acquireLock } from '../engine/mirror/lock.ts';
import { describeEvent } from './watch-command.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import { sync } from '../engine/mirror/sync.ts';

const BIN = fileURLToPath(new URL('../../bin/rsdesk.mjs', import.meta.url));
let fixture: FixtureSource;
let dest: string;
let child: ChildProcess | null = null;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 10 });
  dest = mkdtempSync(join(tmpdir(), 'watch-'));
});
afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = null;
  await fixture.close();
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const capabilityList = () => fixture.url + fixture.paths.dataset1.capabilityList;

/** Starts `rsdesk watch`; its JSON lines are collected, and `next` waits for one of a type. */
function watch(args: string[]) {
  const events: LiveEvent[] = [];
  const waiters: { type: string; resolve: (e: LiveEvent) => void }[] = [];
  let stderr = '';
  child = spawn(process.execPath, [BIN, 'watch', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.on('data', (d) => (stderr += d));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const e = JSON.parse(line) as LiveEvent;
    events.push(e);
    for (const w of waiters.filter((w) => w.type === e.type)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(e);
    }
  });
  const proc = child;
  return {
    events,
    proc,
    stderr: () => stderr,
    next<T extends LiveEvent['type']>(type: T, ms = 15_000): Promise<Extract<LiveEvent, { type: T }>> {
      const seen = events.find((e) => e.type === type);
      if (seen) return Promise.resolve(seen as Extract<LiveEvent, { type: T }>);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} within ${ms} ms; got ${events.map((e) => e.type).join(', ')}; stderr: ${stderr}`)), ms);
        waiters.push({ type, resolve: (e) => (clearTimeout(timer), resolve(e as Extract<LiveEvent, { type: T }>)) });
      });
    },
    exited: () => new Promise<number | null>((resolve) => (proc.exitCode !== null ? resolve(proc.exitCode) : proc.once('exit', (code) => resolve(code)))),
  };
}

describe('rsdesk watch', () => {
  it('subscribes, prints JSON lines, applies, and unsubscribes on SIGTERM with exit code 0', async () => {
    await sync({ url: capabilityList(), dest });
    const w = watch([capabilityList(), '--dest', dest, '--listen', '127.0.0.1:0', '--apply', '--json', '--lease', '600']);
    const subscribed = await w.next('subscribed');
    expect(subscribed).toMatchObject({ topic: fixture.url + fixture.paths.dataset1.notifications, leaseSeconds: 600 });
    await fixture.hub.settled();
    const [record] = fixture.change('update');
    const n = await w.next('notification');
    expect(n.changes[0]).toMatchObject({ uri: record.loc, change: 'updated' });
    const applied = await w.next('applied');
    expect(applied.updated).toBe(1);
    const rig = { fixture, dest } as Parameters<typeof mirrored>[0];
    expect(mirrored(rig, record.id)!.equals(sourceBytes(rig, record.id))).toBe(true);
    w.proc.kill('SIGTERM');
    expect(await w.exited()).toBe(0);
    expect(w.events.some((e) => e.type === 'unsubscribed')).toBe(true);
    expect(fixture.hub.live()).toHaveLength(0);
    // Every line is one event with a type and a time.
    for (const e of w.events) expect(e).toMatchObject({ type: expect.any(String), at: expect.any(String) });
  });

  it('SIGHUP (its terminal or ssh session closed) unsubscribes as SIGTERM does, and exits 129', async () => {
    // Before, SIGHUP's default killed it at once: no unsubscription, and the hub went on delivering to a callback
    // nobody served until the lease ran out.
    const w = watch([capabilityList(), '--dest', dest, '--listen', '127.0.0.1:0', '--json', '--lease', '600']);
    await w.next('subscribed');
    await fixture.hub.settled();
    expect(fixture.hub.live()).toHaveLength(1);
    w.proc.kill('SIGHUP');
    expect(await w.exited()).toBe(129);
    expect(w.events.some((e) => e.type === 'unsubscribed')).toBe(true);
    expect(fixture.hub.live()).toHaveLength(0);
  });

  it('stops within its deadline when the hub never verifies the unsubscription, and says so', async () => {
    const w = watch([capabilityList(), '--dest', dest, '--listen', '127.0.0.1:0', '--json', '--lease', '600']);
    await w.next('subscribed');
    await fixture.hub.settled();
    fixture.hub.faults.verifyDelayMs = 60_000;
    const started = Date.now();
    w.proc.kill('SIGHUP');
    expect(await w.exited()).toBe(129);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(4_500);
    expect(took).toBeLessThan(12_000);
    expect(w.stderr()).toContain(`subscription to ${fixture.url + fixture.paths.dataset1.notifications} within 5 s: it accepted the request but did not verify it.`);
  }, 30_000);

  it('stops within a few seconds when the hub never answers the unsubscription, and says which hub did not confirm', async () => {
    const w = watch([capabilityList(), '--dest', dest, '--listen', '127.0.0.1:0', '--json', '--lease', '600']);
    await w.next('subscribed');
    await fixture.hub.settled();
    fixture.setBroken(fixture.paths.hub, 'hang');
    const started = Date.now();
    w.proc.kill('SIGTERM');
    expect(await w.exited()).toBe(0);
    const took = Date.now() - started;
    // Before: 30 s, the request's own deadline, however short the wait for the hub's verification.
    expect(took).toBeLessThan(9_000);
    // Said plainly, with why: the request's deadline (4 s) ended before the wait for the hub (5 s).
    expect(w.stderr()).toMatch(
      new RegExp(
        `^rsdesk: the hub ${escape(fixture.url + fixture.paths.hub)} did not confirm the end of the subscription to ${escape(fixture.url + fixture.paths.dataset1.notifications)} within 5 s: ` +
          `the hub 127\\.0\\.0\\.1:\\d+ did not answer within 4 s \\(.*\\)\\. It may go on sending notifications to this computer until the lease ends \\(.*\\)\\.$`,
        'm',
      ),
    );
  }, 40_000);

  it('with --listen alone receives pings only', async () => {
    const w = watch(['--listen', '127.0.0.1:0', '--json']);
    const listening = await w.next('listening');
    const res = await fetch(`${listening.address}/ping?site_name=Fixture&site_uri=${encodeURIComponent(fixture.url + '/')}`);
    expect(res.status).toBe(200);
    const ping = await w.next('ping');
    expect(ping.ping).toMatchObject({ kind: 'rss-ping-1.0', siteName: 'Fixture', siteUri: fixture.url + '/' });
    w.proc.kill('SIGINT');
    expect(await w.exited()).toBe(0);
  });

  it('says in words that its port is held by another program, and how to get round it, with exit code 1', async () => {
    const holder = createServer();
    const port = await new Promise<number>((r) => holder.listen(0, '127.0.0.1', () => r((holder.address() as AddressInfo).port)));
    try {
      const w = watch(['--listen', `127.0.0.1:${port}`, '--json']);
      expect(await w.exited()).toBe(1);
      // Before: "rsdesk: listen EADDRINUSE: address already in use 127.0.0.1:PORT".
      expect(w.stderr()).toBe(
        `rsdesk: The callback server could not start: 127.0.0.1:${port} is already in use by another program (another rsdesk watch, or ResourceSync Desktop, perhaps). ` +
          'Stop that program, or choose another address with --listen HOST:PORT\n',
      );
    } finally {
      holder.close();
    }
  });

  it('refuses a missing --dest with exit code 2', async () => {
    const w = watch([capabilityList()]);
    expect(await w.exited()).toBe(2);
    expect(w.stderr()).toContain('missing --dest');
  });
});

describe('rsdesk watch for people', () => {
  it('says its times are UTC (a bare 03:04:05 read as the local clock was hours off)', () => {
    expect(describeEvent({ type: 'unsubscribed', at: '2026-11-28T03:04:05.123Z', topic: 'http://127.0.0.1/n' } as LiveEvent)).toBe('03:04:05Z unsubscribed: http://127.0.0.1/n');
  });
});

describe('a crash between receipt and apply', () => {
  it('loses nothing and applies nothing twice', async () => {
    await sync({ url: capabilityList(), dest });
    // Another writer holds the mirror: the notification is stored and acknowledged, its apply waits.
    const lock = acquireLock(stateDirOf(dest), 'the test, standing in for a long rsdesk sync', dest);
    const w = watch([capabilityList(), '--dest', dest, '--listen', '127.0.0.1:0', '--apply', '--json']);
    await w.next('subscribed');
    await fixture.hub.settled();
    const [record] = fixture.change('update');
    await w.next('notification');
    const waiting = await w.next('note');
    expect(waiting.message).toContain('in use by');
    expect(fixture.hub.deliveries.at(-1)).toMatchObject({ status: 202 });
    w.proc.kill('SIGKILL');
    await w.exited();
    lock.release();

    const stored = new MirrorState(stateDirOf(dest));
    const inbox = stored.db.prepare('SELECT status, length(body) AS bytes FROM live_inbox').all();
    stored.close();
    expect(inbox).toEqual([{ status: 'received', bytes: fixture.notifications.at(-1)!.length }]);
    const requestsBefore = fixture.requests.filter((r) => r.path === fixture.state.pathOf(record.id)).length;

    // Started again (here in this process): the stored notification is applied, once.
    const engine = new LiveEngine({ port: 0, retryBaseMs: 50, lockRetryMs: 100 });
    const events: LiveEvent[] = [];
    engine.events.on((e) => events.push(e));
    await engine.start();
    try {
      engine.openMirror(dest);
      const applied = await waitFor({ engine, events }, 'applied');
      expect(applied.updated).toBe(1);
      await engine.idle();
      expect(events.filter((e) => e.type === 'applied')).toHaveLength(1);
      const rig = { fixture, dest } as Parameters<typeof mirrored>[0];
      expect(mirrored(rig, record.id)!.equals(sourceBytes(rig, record.id))).toBe(true);
      expect(fixture.requests.filter((r) => r.path === fixture.state.pathOf(record.id)).length).toBe(requestsBefore + 1);
      const after = engine.feed(dest)!.state.db.prepare('SELECT status FROM live_inbox').all();
      expect(after).toEqual([{ status: 'applied' }]);
      // Opened once more: nothing left to do.
      await engine.closeMirror(dest);
      engine.openMirror(dest);
      await engine.idle();
      expect(events.filter((e) => e.type === 'applied')).toHaveLength(1);
    } finally {
      await engine.stop();
    }
  });
});
