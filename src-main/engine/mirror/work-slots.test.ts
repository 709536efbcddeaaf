import { describe, expect, it } from 'vitest';
import { WorkSlots } from './work-slots.ts';

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('WorkSlots', () => {
  it('never has more than its limit in flight, and lets the next in as soon as one settles', async () => {
    const slots = new WorkSlots(3);
    const tasks = Array.from({ length: 10 }, deferred);
    let most = 0;
    let started = 0;
    const feeder = (async () => {
      for (const t of tasks) {
        started++;
        const full = slots.add(t.promise);
        most = Math.max(most, slots.active);
        if (full) await full;
      }
    })();
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(3);
    tasks[1]!.resolve();
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(4);
    for (const t of tasks) t.resolve();
    await feeder;
    await slots.all();
    expect(slots.active).toBe(0);
    expect(most).toBe(3);
  });

  it('waits for every task before all() rejects with the first rejection; allSettled() does not reject', async () => {
    const slots = new WorkSlots(4);
    const a = deferred();
    const b = deferred();
    slots.add(a.promise);
    slots.add(b.promise);
    let settled = false;
    const all = slots.all().then(
      () => 'resolved',
      (err: Error) => {
        settled = true;
        return err.message;
      },
    );
    a.reject(new Error('first'));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    b.resolve();
    expect(await all).toBe('first');
    await expect(slots.allSettled()).resolves.toBeUndefined();
  });
});
