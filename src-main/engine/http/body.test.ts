// The eager body reader: every byte that arrived reaches the consumer, even when the stream is destroyed by an error
// while the consumer was still busy (a transfer that broke off must be resumed from the last byte that came).
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eager } from './body.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('eager', () => {
  it('yields the chunks that arrived before an error, then throws it', async () => {
    const source = new Readable({ read() {} });
    const got: string[] = [];
    const reading = (async () => {
      for await (const chunk of eager(source)) {
        got.push(String(chunk));
        // A slow consumer: the error comes while it is busy with the first chunk.
        await pause(20);
      }
    })();
    source.push('a');
    await pause(2);
    // These arrive while the consumer is busy with 'a' (a plain `for await` would drop them on the error below).
    source.push('b');
    source.push('c');
    await pause(3);
    source.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await expect(reading).rejects.toMatchObject({ code: 'ECONNRESET' });
    // 'b' and 'c', waiting together, may come as one chunk: every byte comes, in order.
    expect(got.join('')).toBe('abc');
  });

  it('reports a close without end as a premature close, after the chunks', async () => {
    const source = new Readable({ read() {} });
    const got: string[] = [];
    const reading = (async () => {
      for await (const chunk of eager(source)) got.push(String(chunk));
    })();
    source.push('x');
    await pause(5);
    source.destroy();
    await expect(reading).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(got).toEqual(['x']);
  });

  it('pauses the source while the consumer is far behind, and resumes it', async () => {
    let produced = 0;
    const source = new Readable({
      read() {
        if (produced >= 64) return void this.push(null);
        produced++;
        this.push(Buffer.alloc(1024, produced));
      },
    });
    const seen: number[] = [];
    let pausedSeen = false;
    for await (const chunk of eager(source, 8 * 1024)) {
      if (source.isPaused()) pausedSeen = true;
      // Chunks waiting together come as one: each kilobyte is still there, in order.
      for (let i = 0; i < chunk.length; i += 1024) seen.push((chunk as Buffer)[i]!);
      await pause(1);
    }
    expect(seen).toEqual(Array.from({ length: 64 }, (_, i) => i + 1));
    expect(pausedSeen).toBe(true);
  });

  it('a body sent a byte at a time: few chunks held ahead, handed on joined', async () => {
    let produced = 0;
    const source = new Readable({
      highWaterMark: 1,
      read() {
        if (produced >= 200_000) return void this.push(null);
        produced++;
        this.push(Buffer.of(produced % 256));
      },
    });
    let chunks = 0;
    let bytes = 0;
    let mostAhead = 0;
    for await (const chunk of eager(source)) {
      chunks++;
      bytes += chunk.length;
      mostAhead = Math.max(mostAhead, produced - bytes);
      if (chunks % 10 === 0) await pause(1);
    }
    expect(bytes).toBe(200_000);
    // One by one it was 200,000 chunks, with up to a mebibyte of them (a million objects) held ahead.
    expect(chunks).toBeLessThan(2_000);
    expect(mostAhead).toBeLessThanOrEqual(4096 + 64);
  });

  it('keeps what arrived before the consumer began, and never waits on a stream that is already gone', async () => {
    const source = new Readable({ read() {} });
    const chunks = eager(source);
    source.push('early');
    await pause(2);
    source.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await pause(2);
    const got: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of chunks) got.push(String(chunk));
      })(),
    ).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(got).toEqual(['early']);

    const gone = new Readable({ read() {} });
    // Whoever destroyed it was listening (an http response is); without a listener the error would be uncaught here.
    gone.on('error', () => undefined);
    gone.destroy(new Error('refused'));
    await pause(2);
    await expect(
      (async () => {
        for await (const _ of eager(gone));
      })(),
    ).rejects.toThrow('refused');
    const closed = new Readable({ read() {} });
    closed.destroy();
    await pause(2);
    await expect(
      (async () => {
        for await (const _ of eager(closed));
      })(),
    ).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});
