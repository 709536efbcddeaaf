import { describe, expect, it } from 'vitest';
import { ReadAhead } from './read-ahead.ts';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadAhead', () => {
  it('hands entries on in order while the reader runs ahead, pausing the reader at the limit until half are taken', async () => {
    const handed: number[] = [];
    let release: (() => void) | null = null;
    const ahead = new ReadAhead<number>(4, (n) => {
      handed.push(n);
      // The first entry's work is slow: the reader runs ahead meanwhile.
      if (n === 0) return new Promise<void>((resolve) => (release = resolve));
      return undefined;
    });
    const pauses: number[] = [];
    const reader = (async () => {
      for (let i = 0; i < 10; i++) {
        const wait = ahead.push(i);
        if (wait) {
          pauses.push(i);
          await wait;
        }
      }
      ahead.end();
    })();
    await tick();
    // The reader pushed 0–3 before the worker took 0 and paused there (four waiting); 0 is being worked on and 1–3
    // wait: not below half the limit, so the reader stays paused.
    expect(handed).toEqual([0]);
    expect(ahead.waiting).toBe(3);
    expect(pauses).toEqual([3]);
    release!();
    await reader;
    await ahead.done;
    expect(handed).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('stops: drops what waits and releases a paused reader; a failing work rejects done and stops', async () => {
    const handed: number[] = [];
    const ahead = new ReadAhead<number>(2, (n) => {
      handed.push(n);
      return new Promise<void>(() => undefined); // never settles
    });
    ahead.push(1);
    ahead.push(2);
    const paused = ahead.push(3);
    expect(paused).toBeInstanceOf(Promise);
    ahead.stop();
    await paused;
    expect(ahead.push(4)).toBeUndefined();
    expect(ahead.waiting).toBe(0);

    const failing = new ReadAhead<number>(10, () => Promise.reject(new Error('disk full')));
    failing.push(1);
    await expect(failing.done).rejects.toThrow('disk full');
    // The reader learns it at its next entry, and stops reading.
    await expect(failing.push(2)).rejects.toThrow('disk full');
  });
});
