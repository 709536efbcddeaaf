// A subscription stored before hubs were judged (session 19: a hub further inside the network than the mirror's
// Source is not asked) is judged at start-up and at every request: never renewed there, not dropped unsaid either.
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stateDirOf } from '../mirror/state.ts';
import { LiveEngine } from './engine.ts';
import type { LiveEvent } from './model.ts';
import { startRig, throughRecordingProxy, waitFor, type Rig } from './test-support.ts';

let rig: Rig;
let engine: LiveEngine | null = null;
afterEach(async () => {
  await engine?.stop();
  engine = null;
  await rig?.close();
});

describe('a subscription stored with a hub further inside the network than its Source', () => {
  it('is not renewed nor asked to end; it stays listed with why until it is unsubscribed here', async () => {
    rig = await startRig();
    const sub = await rig.engine.subscribe({ dest: rig.dest, topic: rig.topic, hub: rig.hubUrl, leaseSeconds: 2 });
    await waitFor(rig, 'subscribed');
    await rig.fixture.hub.settled();
    await rig.engine.stop();
    // As a version before the check could have stored it.
    const metadata = 'http://169.254.169.254/latest/hub';
    const db = new DatabaseSync(join(stateDirOf(rig.dest), 'state.sqlite'));
    db.prepare('UPDATE live_subscriptions SET hub = ? WHERE id = ?').run(metadata, sub.id);
    db.close();
    await throughRecordingProxy(async (asked) => {
      engine = new LiveEngine({ port: 0, reorderWaitMs: 300, retryBaseMs: 50, verifyTimeoutMs: 5_000, lockRetryMs: 100, minRenewMs: 500 });
      const events: LiveEvent[] = [];
      engine.events.on((e) => events.push(e));
      await engine.start();
      engine.openMirror(rig.dest);
      const said = await waitFor({ engine, events }, 'error', (e) => e.subscriptionId === sub.id, 3_000);
      expect(said.message).toMatch(
        /^Not renewed: the hub http:\/\/169\.254\.169\.254\/latest\/hub is not asked, since 169\.254\.169\.254 is a link-local address \(such as a cloud server’s metadata service\), which a Source at 127\.0\.0\.1:\d+ may not send requests to\. The subscription was made before this was checked; it stays listed until it is unsubscribed \(here alone: the hub is not asked\), and its lease ends at .*\.$/,
      );
      // Past the renewal (at 80 % of 2 s) and the lease's end: nothing asked, still listed, ended, with why.
      await waitFor({ engine, events }, 'expired', (e) => e.subscriptionId === sub.id, 3_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(asked).toEqual([]);
      expect(engine.subscriptions()).toEqual([expect.objectContaining({ id: sub.id, hub: metadata, status: 'expired', lastError: said.message })]);
      // Unsubscribing ends it here, without a request to the hub.
      await engine.unsubscribe(rig.dest, sub.id);
      await waitFor({ engine, events }, 'unsubscribed', (e) => e.subscriptionId === sub.id, 1_000);
      expect(events.some((e) => e.type === 'note' && e.message.startsWith(`Ended the subscription to ${rig.topic} here without asking its hub: the hub ${metadata} is not asked`))).toBe(true);
      expect(engine.subscriptions()[0].status).toBe('unsubscribed');
      expect(asked).toEqual([]);
    });
    const fixture = rig.fixture;
    rig = { ...rig, close: () => fixture.close() };
  });
});
