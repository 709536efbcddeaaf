// The file thread: jobs run in the order they were queued (across calls made in the same tick and later ones), each
// job's failure comes back as its own result without stopping the others, and mtimes are set as files are written.
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileThread } from './file-thread.ts';

const fresh = () => mkdtempSync(join(tmpdir(), 'file-thread-'));

describe('FileThread', () => {
  it('writes, renames and sets mtimes in order, one result per job', async () => {
    const dir = fresh();
    const thread = new FileThread();
    const mtime = Date.UTC(2019, 4, 6, 7, 8, 9);
    const first = thread.run([
      { op: 'write', path: join(dir, 'a.part'), chunks: [Buffer.from('hello '), Buffer.from('world')], mtimeMs: mtime },
      { op: 'mkdir', path: join(dir, 'x', 'y') },
    ]);
    // Queued in the same tick: runs after the first call's jobs, so the file exists by then.
    const second = thread.run([
      { op: 'rename', from: join(dir, 'a.part'), to: join(dir, 'x', 'y', 'a.txt') },
    ]);
    expect(await first).toEqual([null, null]);
    expect(await second).toEqual([null]);
    const final = join(dir, 'x', 'y', 'a.txt');
    expect(readFileSync(final, 'utf8')).toBe('hello world');
    expect(statSync(final).mtimeMs).toBe(mtime);
    expect(existsSync(join(dir, 'a.part'))).toBe(false);
  });

  it('reports a failed job with its reason and runs the rest', async () => {
    const dir = fresh();
    writeFileSync(join(dir, 'there'), 'x');
    const thread = new FileThread();
    const results = await thread.run([
      { op: 'rename', from: join(dir, 'missing'), to: join(dir, 'elsewhere') },
      { op: 'write', path: join(dir, 'no-such-folder', 'f'), chunks: [Buffer.from('x')] },
      { op: 'utimes', path: join(dir, 'there'), mtimeMs: 0 },
      { op: 'rm', path: join(dir, 'there') },
    ]);
    expect(results[0]).toMatch(/ENOENT/);
    expect(results[1]).toMatch(/ENOENT/);
    expect(results.slice(2)).toEqual([null, null]);
    expect(existsSync(join(dir, 'there'))).toBe(false);
    await expect(thread.one({ op: 'utimes', path: join(dir, 'gone'), mtimeMs: 0 })).rejects.toThrow(/ENOENT/);
  });

  it('keeps order across many batches sent while earlier ones are still running', async () => {
    const dir = fresh();
    const thread = new FileThread();
    const path = join(dir, 'f');
    const runs: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      runs.push(thread.run([{ op: 'write', path, chunks: [Buffer.from(String(i))] }]));
      if (i % 7 === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(runs);
    expect(readFileSync(path, 'utf8')).toBe('199');
  });

  it('moves a transferred buffer to the thread instead of copying it', async () => {
    const dir = fresh();
    const thread = new FileThread();
    const own = Buffer.allocUnsafeSlow(4);
    own.write('move');
    const path = join(dir, 'moved');
    await thread.one({ op: 'write', path, chunks: [own] }, [own.buffer as ArrayBuffer]);
    expect(own.buffer.byteLength).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('move');
  });
});

describe('FileThread.write', () => {
  it('writes many small files from views of larger buffers, each its own bytes, in order with other jobs', async () => {
    const dir = fresh();
    const thread = new FileThread();
    const big = Buffer.alloc(64 * 1024, 'z');
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) {
      const body = Buffer.from(`file ${i} `.repeat(1 + (i % 5)));
      // A view in the middle of a larger buffer, split in two chunks.
      big.set(body, 1000);
      const view = Buffer.from(big.buffer, big.byteOffset + 1000, body.length);
      const copy = Buffer.from(view);
      writes.push(thread.write(join(dir, `${i}.part`), [copy.subarray(0, 3), copy.subarray(3)], Date.UTC(2020, 0, 1, 0, 0, i % 60)));
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    const renamed = thread.run([{ op: 'rename', from: join(dir, '299.part'), to: join(dir, 'last.txt') }]);
    await Promise.all(writes);
    expect(await renamed).toEqual([null]);
    for (let i = 0; i < 299; i++) {
      expect(readFileSync(join(dir, `${i}.part`), 'utf8')).toBe(`file ${i} `.repeat(1 + (i % 5)));
      expect(statSync(join(dir, `${i}.part`)).mtimeMs).toBe(Date.UTC(2020, 0, 1, 0, 0, i % 60));
    }
    expect(readFileSync(join(dir, 'last.txt'), 'utf8')).toBe('file 299 '.repeat(5));
    // The caller's buffers are left as they were (copied, not moved).
    expect(big.byteLength).toBe(64 * 1024);
  });

  it('fails a write alone, with its reason', async () => {
    const dir = fresh();
    const thread = new FileThread();
    const ok = thread.write(join(dir, 'ok'), [Buffer.from('fine')]);
    const bad = thread.write(join(dir, 'missing', 'f'), [Buffer.from('lost')]);
    await expect(bad).rejects.toThrow(/ENOENT/);
    await ok;
    expect(readFileSync(join(dir, 'ok'), 'utf8')).toBe('fine');
  });
});

describe('FileThread: writes no one awaits yet', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('wait to travel together, until a job someone awaits or a flush sends them', async () => {
    const dir = fresh();
    // A delay no test outlasts: only the run and the flush below send them.
    const thread = new FileThread({ lazyDelayMs: 60_000 });
    const first = Array.from({ length: 5 }, (_, i) => thread.write(join(dir, `a${i}`), [Buffer.from(`a${i}`)], undefined, true));
    await sleep(30);
    expect(thread.messages).toBe(0);
    expect(existsSync(join(dir, 'a0'))).toBe(false);
    // A job someone awaits goes at once, and the lazy ones queued before it with it, in order.
    expect(await thread.run([{ op: 'rename', from: join(dir, 'a4'), to: join(dir, 'last') }])).toEqual([null]);
    await Promise.all(first);
    expect(thread.messages).toBe(1);
    expect(readFileSync(join(dir, 'last'), 'utf8')).toBe('a4');

    const second = Array.from({ length: 3 }, (_, i) => thread.write(join(dir, `b${i}`), [Buffer.from(`b${i}`)], undefined, true));
    await sleep(30);
    expect(thread.messages).toBe(1);
    thread.flush();
    await Promise.all(second);
    expect(thread.messages).toBe(2);
    for (let i = 0; i < 3; i++) expect(readFileSync(join(dir, `b${i}`), 'utf8')).toBe(`b${i}`);
  });

  it('go by themselves a few milliseconds later', async () => {
    const dir = fresh();
    const thread = new FileThread();
    await thread.write(join(dir, 'alone'), [Buffer.from('alone')], undefined, true);
    expect(readFileSync(join(dir, 'alone'), 'utf8')).toBe('alone');
  });
});
