// rsdesk watch: subscribes to a Source's change-notification channel(s) through a callback server of its own and
// prints every event as it happens (one JSON object per line with --json) until Ctrl+C, SIGTERM or SIGHUP, which
// unsubscribes (waiting a few seconds for the hub's verification) and exits 0 (129 after SIGHUP). `--listen` without
// a URL runs only the callback server: pings.
import { resolve } from 'node:path';
import { clip } from '../engine/clip.ts';
import { LiveEngine, DEFAULT_LIVE_PORT } from '../engine/live/engine.ts';
import type { LiveEvent } from '../engine/live/model.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import type { Io } from './io.ts';
import { UsageError } from './usage.ts';
import { firstStopSignal, SIGNAL_EXIT, type StopSignal } from './exit-codes.ts';
import { cliSecretStore } from './mirror-commands.ts';

export interface WatchOptions {
  url?: string;
  dest?: string;
  listen?: string;
  publicUrl?: string;
  secret?: string;
  lease?: string;
  apply: boolean;
  syncOnPing: boolean;
  json: boolean;
  timeoutMs?: number;
  /** Resolves when the command should stop (tests), with the signal that stopped it; default: SIGINT, SIGTERM or SIGHUP. */
  stopSignal?: Promise<StopSignal | void>;
}

export function parseListen(value: string | undefined): { host: string; port: number } {
  if (value === undefined) return { host: '127.0.0.1', port: DEFAULT_LIVE_PORT };
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(value) ?? /^()()(\d{1,5})$/.exec(value);
  if (!m || Number(m[3]) > 65535) throw new UsageError(`--listen must be HOST:PORT (or PORT), not ${JSON.stringify(value)}`);
  return { host: m[1] || m[2] || '127.0.0.1', port: Number(m[3]) };
}

function parseLease(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,8}$/.test(value) || Number(value) < 1) throw new UsageError(`--lease must be a whole number of seconds from 1 to 99999999, not ${JSON.stringify(value)}`);
  return Number(value);
}

/** One line for people, its time in UTC, as the leases' ends and the notifications' from and until are given. */
export function describeEvent(e: LiveEvent): string {
  const time = `${e.at.slice(11, 19)}Z`;
  switch (e.type) {
    case 'listening':
      return `${time} listening on ${e.address}; callbacks at ${e.callbackBase}/websub/…`;
    case 'subscribing':
      return `${time} asking ${e.hub} to ${e.mode} ${e.topic}${e.attempt > 1 ? ` (attempt ${e.attempt})` : ''}`;
    case 'subscribed':
    case 'renewed':
      return `${time} ${e.type} to ${e.topic}${e.leaseSeconds !== null ? ` (lease ${e.leaseSeconds} s, until ${e.expiresAt})` : ''}`;
    case 'unsubscribed':
      return `${time} ${e.type}: ${e.topic}`;
    case 'expired':
      return e.foreseen
        ? `${time} lease ended: ${e.topic} (the hub's leases are shorter than the renewal interval; the hub sends nothing until the renewal)`
        : `${time} lease ended before a renewal was confirmed: ${e.topic} (the hub sends nothing until it is)`;
    case 'denied':
      return `${time} the hub denied the subscription to ${e.topic}${e.reason ? `: ${e.reason}` : ''}`;
    case 'notification':
      return `${time} notification ${e.from} – ${e.until}: ${e.count} change${e.count === 1 ? '' : 's'}${e.warnings.length ? ` (${e.warnings.join('; ')})` : ''}` +
        e.changes.slice(0, 20).map((c) => `\n    ${c.change.padEnd(8)} ${c.uri}`).join('') + (e.count > 20 ? `\n    … ${e.count - 20} more` : '');
    case 'applied':
      return `${time} applied: created ${e.created}, updated ${e.updated}, deleted ${e.deleted}, unchanged ${e.unchanged}, ${e.skipped ? `skipped ${e.skipped}, ` : ''}failed ${e.failed}` +
        e.changes.filter((c) => c.reason !== undefined).map((c) => `\n    ${c.outcome} ${c.uri}: ${c.reason}`).join('');
    case 'duplicate':
      return `${time} dropped a notification: ${e.reason}`;
    case 'gap':
      return `${time} gap from ${e.from} to ${e.until}: ${e.action === 'catch-up' ? 'catching up from the Change List' : e.action === 'needs-sync' ? 'the mirror needs an incremental sync' : 'not applied (no --apply)'}`;
    case 'caught-up':
      return `${time} caught up ${e.from} – ${e.until}: created ${e.created}, updated ${e.updated}, deleted ${e.deleted}, failed ${e.failed}${e.covered ? `, covered ${e.covered}` : ''}` +
        e.coveredChanges.map((c) => `\n    covered ${c.uri}: ${c.reason}`).join('') +
        (e.covered > e.coveredChanges.length ? `\n    … ${e.covered - e.coveredChanges.length} more covered` : '') +
        e.failures.map((c) => `\n    failed ${c.uri}: ${c.reason}`).join('') +
        (e.failed > e.failures.length ? `\n    … ${e.failed - e.failures.length} more` : '') +
        (e.failed > 0 ? `\n    (rsdesk retry --run ${e.runId} fetches ${e.failed === 1 ? 'it' : 'them'} again)` : '');
    case 'ping': {
      const p = e.ping;
      return `${time} ping (${p.kind}) ${p.siteName ?? ''} ${p.siteUri ?? p.feedUri ?? ''}`.trimEnd() + (e.triggered.length ? ` → syncing ${e.triggered.join(', ')}` : '');
    }
    case 'sync':
      return `${time} synced ${e.dest} (${e.reason}): created ${e.created}, updated ${e.updated}, deleted ${e.deleted}, failed ${e.failed}`;
    case 'rejected':
      return `${time} rejected ${e.what}: ${e.reason}`;
    case 'error':
      return `${time} error: ${e.message}`;
    case 'note':
      return `${time} note: ${e.message}`;
  }
}

export async function watchCommand(o: WatchOptions, io: Io): Promise<number> {
  const listenOnly = o.url === undefined && o.dest === undefined;
  if (listenOnly && o.listen === undefined) throw new UsageError('missing <url> and --dest (or --listen HOST:PORT alone, to receive pings only)');
  if (!listenOnly && o.url === undefined) throw new UsageError('missing <capabilitylist-or-topic-url>');
  if (!listenOnly && o.dest === undefined) throw new UsageError('missing --dest <dir>');
  const { host, port } = parseListen(o.listen);
  const leaseSeconds = parseLease(o.lease);
  if (o.publicUrl !== undefined) {
    try {
      new URL(o.publicUrl);
    } catch {
      throw new UsageError(`--public-url must be a URL, not ${JSON.stringify(o.publicUrl)}`);
    }
  }
  const engine = new LiveEngine({ host, port, publicUrl: o.publicUrl ?? null, hubTimeoutMs: o.timeoutMs, secretStore: cliSecretStore() });
  engine.events.on((e) => io.out((o.json ? JSON.stringify(e) : describeEvent(e)) + '\n'));
  const stop = o.stopSignal ?? firstStopSignal();
  try {
    await engine.start();
  } catch (err) {
    await engine.stop();
    const busy = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    throw new Error(`The callback server could not start: ${(err as Error).message}${busy ? '. Stop that program, or choose another address with --listen HOST:PORT' : ''}`);
  }
  const mine: number[] = [];
  let dest: string | null = null;
  try {
    if (!listenOnly) {
      dest = resolve(o.dest!);
      const found = await engine.channels(o.url!);
      if (found.channels.length === 0) {
        io.err(`rsdesk: ${clip(o.url!)} is ${found.found}: nothing to subscribe to.\n`);
        return 1;
      }
      bindIfNew(dest, found.binding);
      engine.openMirror(dest, { apply: o.apply, pingSync: o.syncOnPing });
      for (const channel of found.channels) {
        const sub = await engine.subscribe({ dest, topic: channel.topic, hub: channel.hub, leaseSeconds, ...(o.secret !== undefined ? { secret: o.secret } : {}) });
        mine.push(sub.id);
      }
    }
    const by = await stop;
    if (dest !== null) await unsubscribeAll(engine, dest, mine, io);
    // A hangup says so in its exit code, as a sync's does; Ctrl-C and SIGTERM are the ordinary way to end a watch.
    return by === 'SIGHUP' ? SIGNAL_EXIT.SIGHUP : 0;
  } finally {
    await engine.stop();
  }
}

/** A new mirror folder gets the binding of the Capability List it watches (what apply and catch-up need). */
function bindIfNew(dest: string, binding: Awaited<ReturnType<LiveEngine['channels']>>['binding']): void {
  const state = new MirrorState(stateDirOf(dest));
  try {
    if (state.binding() === null && binding !== null) state.setBinding({ ...binding, maps: [], allowHosts: [], createdAt: new Date().toISOString() });
  } finally {
    state.close();
  }
}

async function unsubscribeAll(engine: LiveEngine, dest: string, ids: number[], io: Io): Promise<void> {
  const waiting = new Set(ids);
  const done = new Promise<void>((res) => {
    const off = engine.events.on((e) => {
      if ((e.type === 'unsubscribed' || e.type === 'denied') && waiting.delete(e.subscriptionId) && waiting.size === 0) {
        off();
        res();
      }
    });
    if (waiting.size === 0) res();
  });
  // The hub's verification (a GET to us) is waited for a few seconds at most: a service manager kills a process that
  // takes longer to stop. The requests go out together, not one hub's deadline after another's, each with a deadline
  // of its own within that wait (a hub that never answered held the process for its usual 30 s).
  const answered = new Set<number>();
  const asked = Promise.all(
    ids.map((id) =>
      engine
        .unsubscribe(dest, id, UNSUBSCRIBE_REQUEST_MS)
        .then(() => answered.add(id))
        .catch(() => waiting.delete(id)),
    ),
  ).then(() => done);
  await Promise.race([asked, new Promise((r) => setTimeout(r, UNSUBSCRIBE_DEADLINE_MS).unref())]);
  for (const sub of engine.subscriptions()) {
    if (!waiting.has(sub.id) || sub.dest !== dest || sub.status === 'unsubscribed') continue;
    const why = !answered.has(sub.id) ? 'it did not answer the request' : sub.lastError !== null ? sub.lastError : 'it accepted the request but did not verify it';
    const until = sub.expiresAt !== null ? ` (${sub.expiresAt})` : '';
    io.err(
      `rsdesk: the hub ${sub.hub} did not confirm the end of the subscription to ${sub.topic} within ${UNSUBSCRIBE_DEADLINE_MS / 1000} s: ${why}. ` +
        `It may go on sending notifications to this computer until the lease ends${until}.\n`,
    );
  }
}

/** How long a stopping watch waits for its hubs to confirm, all together; and each request's own deadline. */
const UNSUBSCRIBE_DEADLINE_MS = 5_000;
const UNSUBSCRIBE_REQUEST_MS = 4_000;

