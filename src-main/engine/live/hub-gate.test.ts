// Requests to one hub go a few at a time (hub-gate.ts): a mirror with many channels, or a moved callback server that
// asks again for every subscription at once, no longer opens a connection to the hub for each at the same moment.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HUB_REQUESTS_AT_ONCE, HubGate } from './hub-gate.ts';
import { startRig, type Rig } from './test-support.ts';

let rig: Rig | null = null;
afterEach(async () => {
  await rig?.close();
  rig = null;
});

describe('requests to one hub', () => {
  it('go at most a few at once, whatever the number of subscriptions asked for together', async () => {
    rig = await startRig();
    let now = 0;
    let most = 0;
    let asked = 0;
    const hub = createServer((req, res) => {
      req.resume();
      asked++;
      most = Math.max(most, ++now);
      // Accepted after a while; it never verifies (that is not what is looked at here).
      setTimeout(() => {
        now--;
        res.writeHead(202).end();
      }, 150);
    });
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(hub.address() as AddressInfo).port}/hub`;
      const r = rig;
      await Promise.all(Array.from({ length: 12 }, (_, i) => r.engine.subscribe({ dest: r.dest, topic: `${r.topic}?channel=${i}`, hub: url })));
      expect(asked).toBe(12);
      // Before: 12 at once.
      expect(most).toBe(HUB_REQUESTS_AT_ONCE);
    } finally {
      hub.closeAllConnections();
      hub.close();
    }
  });

  it('a request waiting its turn leaves the queue when its signal aborts, and the others go on in order', async () => {
    const gate = new HubGate(1);
    const first = await gate.enter('http://h');
    const stop = new AbortController();
    const order: string[] = [];
    const second = gate.enter('http://h', stop.signal).then(
      () => order.push('second'),
      (err: Error) => order.push(`second: ${err.name}`),
    );
    const third = gate.enter('http://h').then((release) => {
      order.push('third');
      release();
    });
    expect(gate.waiting).toBe(2);
    stop.abort();
    await second;
    expect(gate.waiting).toBe(1);
    first();
    await third;
    expect(order).toEqual(['second: AbortError', 'third']);
    expect(gate.waiting).toBe(0);
  });
});
