// The live side's runs hold no more than the first of their failures (`keptFailures`, MAX_KEPT_FAILURES unless
// told), as every run does: a catch-up of 200,000 failing changes held 200,000 failure objects. Made to happen here
// with a bound of two against the fixture Source: which changes failed, the journal and the hold on the checkpoint
// must be as when all are held.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { Http } from '../http/client.ts';
import { Fetcher } from '../mirror/fetcher.ts';
import { MirrorState, stateDirOf } from '../mirror/state.ts';
import { sync } from '../mirror/sync.ts';
import { applyBatch, catchUp, type MirrorContext } from './apply-live.ts';
import { liveHold } from './checkpoint.ts';
import { readNotification } from './payload.ts';
import { LiveStore } from './store.ts';

let fixture: FixtureSource;
let dest: string;
let ctx: MirrorContext;
beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 50 });
  dest = mkdtempSync(join(tmpdir(), 'live-failures-kept-'));
  await sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, timeoutMs: 2_000 });
  const state = new MirrorState(stateDirOf(dest));
  const fetcher = new Fetcher({ concurrency: 2, timeoutMs: 2_000 });
  ctx = { dest, stateDir: stateDirOf(dest), state, store: new LiveStore(state.db, dest), fetcher, http: new Http({ timeoutMs: 2_000 }), deletePolicy: 'keep', concurrency: 2, keptFailures: 2 };
});
afterEach(async () => {
  ctx.state.close();
  await ctx.fetcher.close();
  await ctx.http.close();
  await fixture.close();
});

const subscription = () => ctx.store.addSubscription({ topic: 'http://127.0.0.1/topic', hub: fixture.url + '/hub', callbackToken: 't', callbackUrl: 'http://127.0.0.1/cb', secret: null, leaseRequested: null, cursor: null });

/** Six resources changed at the Source that answer 404 (not those with a mirror location, every fifth). */
function brokenChanges() {
  return [1, 2, 3, 4, 6, 7].map((id) => {
    const [record] = fixture.change('update', 1, id);
    fixture.setBroken(fixture.state.pathOf(id), { status: 404 });
    return record;
  });
}

describe('a live run with more failures than it keeps', () => {
  it('a catch-up lists the first, counts them all, journals them all, and holds the checkpoint for those it did not list', async () => {
    const checkpoint = ctx.state.checkpoint()!;
    const broken = brokenChanges();
    const until = new Date(Date.now() + 1000).toISOString();
    const result = await catchUp(ctx, subscription(), ctx.state.binding()!.changeListUrl!, checkpoint.at, until);
    expect(result.counts.failed).toBe(6);
    expect(result.changes).toHaveLength(2);
    expect(ctx.state.failures(result.runId).map((f) => f.uri).sort()).toEqual(broken.map((c) => c.loc).sort());
    // The failures it did not keep may be mended, yet are not listed: only a sync lets the checkpoint go.
    expect(liveHold(ctx.state)).toMatchObject({ overflow: true });
    expect(ctx.state.checkpoint()!.at).toBe(checkpoint.at);
  });

  it('a batch of notifications says of every change that failed that it failed, read back from the journal', async () => {
    const broken = brokenChanges();
    const from = ctx.state.checkpoint()!.at;
    const until = new Date(Date.now() + 1000).toISOString();
    const body =
      `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
      `<rs:md capability="change-notification" from="${from}" until="${until}"/>` +
      broken.map((c) => `<url><loc>${c.loc}</loc><rs:md change="updated" datetime="${c.datetime}"/></url>`).join('') +
      `</urlset>`;
    const read = await readNotification(new TextEncoder().encode(body), fixture.url + '/notification');
    if (!read.ok) throw new Error(read.reason);
    const sub = subscription();
    const inbox = await ctx.store.receive({ subscriptionId: sub.id, sha256: 'test', contentType: 'application/xml', link: null, body: new TextEncoder().encode(body) });
    const result = await applyBatch(ctx, sub, [{ inboxId: inbox, notification: read.notification }], null, null);
    expect(result.counts.failed).toBe(6);
    expect(result.changes).toHaveLength(6);
    for (const c of result.changes) expect(c).toMatchObject({ outcome: 'failed', reason: expect.stringContaining('404') });
    expect(liveHold(ctx.state)).toMatchObject({ overflow: true });
  });
});
