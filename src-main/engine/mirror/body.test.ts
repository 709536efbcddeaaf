// eachChunk reads a body through events with the outcomes `for await` gives: every chunk in order, the stream's
// error, a cut-off stream, a refusal from the caller (the stream is destroyed), and backpressure.
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eachChunk } from './body.ts';

describe('eachChunk', () => {
  it('gives every chunk in order and resolves at the end', async () => {
    const got: string[] = [];
    await eachChunk(Readable.from([Buffer.from('a'), Buffer.from('bc'), Buffer.from('d')]), (c) => void got.push(c.toString()));
    expect(got).toEqual(['a', 'bc', 'd']);
  });

  it("rejects with the stream's error", async () => {
    const body = new PassThrough();
    const read = eachChunk(body, () => undefined);
    body.write('x');
    body.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await expect(read).rejects.toThrow('socket hang up');
  });

  it('rejects when the stream is closed before its end, or was already', async () => {
    const body = new PassThrough();
    const read = eachChunk(body, () => undefined);
    body.write('x');
    body.destroy();
    await expect(read).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    await expect(eachChunk(body, () => undefined)).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    const failed = new PassThrough();
    failed.on('error', () => undefined);
    failed.destroy(new Error('gone'));
    await expect(eachChunk(failed, () => undefined)).rejects.toThrow('gone');
  });

  it('stops and destroys the stream when the caller throws', async () => {
    const body = new PassThrough();
    const read = eachChunk(body, (c) => {
      if (c.toString() === 'stop') throw new Error('too many bytes');
      return undefined;
    });
    body.write('fine');
    body.write('stop');
    await expect(read).rejects.toThrow('too many bytes');
    expect(body.destroyed).toBe(true);
  });

  it('pauses while the promise the caller returns is pending, and gives up when it rejects', async () => {
    const body = new PassThrough();
    let release!: () => void;
    const got: string[] = [];
    const read = eachChunk(body, (c) => {
      got.push(c.toString());
      if (got.length === 1) return new Promise<void>((r) => (release = r));
      return undefined;
    });
    body.write('one');
    body.write('two');
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['one']);
    expect(body.isPaused()).toBe(true);
    release();
    await new Promise((r) => setImmediate(r));
    expect(got).toEqual(['one', 'two']);
    body.end();
    await read;

    const other = new PassThrough();
    const refused = eachChunk(other, () => Promise.reject(new Error('disk full')));
    other.write('x');
    await expect(refused).rejects.toThrow('disk full');
    expect(other.destroyed).toBe(true);
  });
});
