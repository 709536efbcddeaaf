// Whether a package download is waited for (and the package read from the file) or read while it downloads: judged
// by its rate, which must not be taken from the slow first moments of a transfer alone.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PartProgress } from './part.ts';
import { endsSoon, type Download } from './source.ts';

const LENGTH = 1000;

/** A transfer that writes nothing for `quietMs`, then `perTenMs` units every 10 ms until LENGTH. */
function transfer(quietMs: number, perTenMs: number): Download {
  const part = new PartProgress();
  part.begin('/tmp/p.part', 0);
  const step = () => {
    const next = Math.min(LENGTH, part.written + perTenMs);
    if (next === LENGTH) part.complete('/tmp/p.zip', LENGTH);
    else {
      part.wrote(next - part.written);
      setTimeout(step, 10);
    }
  };
  setTimeout(step, quietMs);
  return { part, result: new Promise(() => undefined) };
}

beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
afterEach(() => void vi.useRealTimers());

async function judge(download: Download, seconds: number, fast?: { bytesPerSecond: number; seconds: number }): Promise<{ soon: boolean; atMs: number }> {
  const t0 = performance.now();
  let soon: boolean | undefined;
  void endsSoon(download, LENGTH, seconds, undefined, fast).then((r) => (soon = r));
  while (soon === undefined) await vi.advanceTimersByTimeAsync(10);
  return { soon, atMs: performance.now() - t0 };
}

describe('endsSoon', () => {
  it('waits for a transfer that speeds up after a slow start and ends within the allowance', async () => {
    // Nothing for 150 ms, then 1,000 units/s: ends at 1.15 s. Judged from its start alone at 0.75 s (800 units/s),
    // it would end at 1.25 s; at 0.3 s (500 units/s), at 2 s, past the 1.5 s allowed.
    const result = await judge(transfer(150, 10), 1.5);
    expect(result.soon).toBe(true);
    expect(result.atMs).toBeGreaterThanOrEqual(1140);
    expect(result.atMs).toBeLessThan(1250);
  });

  it('gives up on a transfer too slow to end within the allowance, as soon as that shows', async () => {
    // 200 units/s throughout: 5 s.
    const result = await judge(transfer(0, 2), 1.5);
    expect(result.soon).toBe(false);
    expect(result.atMs).toBeGreaterThanOrEqual(750);
    expect(result.atMs).toBeLessThan(850);
  });

  it('waits longer for a transfer faster than extraction, though it ends past the quick allowance', async () => {
    // 300 units/s throughout: ends at 3.3 s, past the 1.5 s allowed (so read alongside before), but at the fast rate
    // (250 units/s here) within its 5 s.
    const result = await judge(transfer(0, 3), 1.5, { bytesPerSecond: 250, seconds: 5 });
    expect(result.soon).toBe(true);
    expect(result.atMs).toBeGreaterThanOrEqual(3300);
    expect(result.atMs).toBeLessThan(3400);
  });

  it('reads alongside a transfer below the fast rate that ends past the quick allowance', async () => {
    const result = await judge(transfer(0, 3), 1.5, { bytesPerSecond: 400, seconds: 5 });
    expect(result.soon).toBe(false);
    expect(result.atMs).toBeLessThan(850);
  });

  it('reads alongside a fast transfer once it stalls', async () => {
    // 300 units/s for 1 s, then nothing: judged fast at first, then, its rate falling below 250 units/s, no longer.
    const part = new PartProgress();
    part.begin('/tmp/p.part', 0);
    const step = () => {
      part.wrote(3);
      if (part.written < 300) setTimeout(step, 10);
    };
    setTimeout(step, 0);
    const result = await judge({ part, result: new Promise(() => undefined) }, 1.5, { bytesPerSecond: 250, seconds: 5 });
    expect(result.soon).toBe(false);
    expect(result.atMs).toBeGreaterThanOrEqual(1000);
    expect(result.atMs).toBeLessThan(1500);
  });

  it('waits only so long for a transfer of unknown length', async () => {
    const part = new PartProgress();
    const t0 = performance.now();
    let soon: boolean | undefined;
    void endsSoon({ part, result: new Promise(() => undefined) }, undefined, 0.5).then((r) => (soon = r));
    while (soon === undefined) await vi.advanceTimersByTimeAsync(10);
    expect(soon).toBe(false);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1000);
  });
});
