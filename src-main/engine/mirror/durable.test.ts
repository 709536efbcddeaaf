// The durable writer: temporary files written off the main thread (small in one go, large in slices), batches whose
// rows are committed only once their files are in place with their mtimes, and failures of one file kept apart.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BATCH_SECONDS, DurableWriter, TempFile } from './durable.ts';

const fresh = () => mkdtempSync(join(tmpdir(), 'durable-'));

async function fill(file: TempFile, body: Buffer, chunk: number): Promise<void> {
  for (let i = 0; i < body.length; i += chunk) {
    const wait = file.add(body.subarray(i, i + chunk));
    if (wait) await wait;
  }
}

describe('TempFile', () => {
  it('writes a small body and a body of many slices byte for byte', async () => {
    const dir = fresh();
    for (const size of [0, 1, 2048, (1 << 20) - 1, 5 * (1 << 20) + 123]) {
      const body = randomBytes(size);
      const file = new TempFile(join(dir, `f${size}`));
      await fill(file, body, 64 * 1024);
      await file.close();
      expect(readFileSync(file.path).equals(body), `size ${size}`).toBe(true);
    }
  });

  it('discard removes the file whether it was opened or not', async () => {
    const dir = fresh();
    const small = new TempFile(join(dir, 'small'));
    small.add(Buffer.from('abc'));
    await small.discard();
    const large = new TempFile(join(dir, 'large'));
    await fill(large, randomBytes(3 << 20), 1 << 16);
    expect(existsSync(large.path)).toBe(true);
    await large.discard();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('DurableWriter', () => {
  it(`commits a batch that stays short of full after ${BATCH_SECONDS} s, without being asked (a slow run loses little to a kill)`, async () => {
    const dest = fresh();
    const commits: string[][] = [];
    const writer = new DurableWriter<string>({ tmpDir: join(dest, '.state', 'tmp'), batchSize: 500, commit: (done) => void commits.push(done) });
    const file = writer.tempFile();
    file.add(Buffer.from('slow'));
    const staged = Date.now();
    writer.stage({ temp: file.path, final: join(dest, 'a', 'slow'), record: 'slow', written: file.close() });
    while (commits.length === 0 && Date.now() - staged < 10_000) await new Promise((r) => setTimeout(r, 50));
    expect(commits).toEqual([['slow']]);
    expect(Date.now() - staged).toBeGreaterThanOrEqual(BATCH_SECONDS * 1000 - 50);
    expect(readFileSync(join(dest, 'a', 'slow'), 'utf8')).toBe('slow');
    // The next batch has a time limit of its own.
    await writer.flush();
    expect(commits).toHaveLength(1);
  });

  it('commits a batch only once its files are in place, with their mtimes, in staging order', async () => {
    const dest = fresh();
    const commits: { done: string[]; failed: string[]; present: boolean[] }[] = [];
    const writer = new DurableWriter<string>({
      tmpDir: join(dest, '.state', 'tmp'),
      batchSize: 3,
      commit: (done, failed) =>
        commits.push({ done, failed: failed.map((f) => f.record), present: done.filter((d) => d.startsWith('f')).map((d) => existsSync(join(dest, 'a', d))) }),
    });
    const mtime = Date.UTC(2020, 1, 3, 4, 5, 6);
    for (const name of ['f1', 'row', 'f2', 'f3']) {
      if (name === 'row') {
        writer.stage({ temp: null, final: '', record: name });
        continue;
      }
      const file = writer.tempFile();
      file.add(Buffer.from(name));
      await file.close();
      writer.stage({ temp: file.path, final: join(dest, 'a', name), mtimeMs: mtime, record: name });
    }
    await writer.flush();
    expect(commits).toEqual([
      { done: ['f1', 'row', 'f2'], failed: [], present: [true, true] },
      { done: ['f3'], failed: [], present: [true] },
    ]);
    expect(readFileSync(join(dest, 'a', 'f2'), 'utf8')).toBe('f2');
    expect(statSync(join(dest, 'a', 'f3')).mtimeMs).toBe(mtime);
    expect(readdirSync(join(dest, '.state', 'tmp'))).toEqual([]);
  });

  it('tells, before any file of a batch is renamed into place, which are about to be, their bytes already durable', async () => {
    const dest = fresh();
    writeFileSync(join(dest, 'old'), 'the older copy');
    const calls: { records: string[]; old: string; renamed: boolean }[] = [];
    const writer = new DurableWriter<string>({
      tmpDir: join(dest, '.state', 'tmp'),
      commit: () => undefined,
      // What the engine marks damaged here: had the process died after the renames and before the commit, the old
      // copy's row would have described bytes that are gone.
      beforeRename: (records) => calls.push({ records, old: readFileSync(join(dest, 'old'), 'utf8'), renamed: existsSync(join(dest, 'new')) }),
    });
    for (const name of ['old', 'new']) {
      const file = writer.tempFile();
      file.add(Buffer.from(`${name}, this run's copy`));
      await file.close();
      writer.stage({ temp: file.path, final: join(dest, name), record: name });
    }
    writer.stage({ temp: null, final: '', record: 'row only' });
    await writer.flush();
    expect(calls).toEqual([{ records: ['old', 'new'], old: 'the older copy', renamed: false }]);
    expect(readFileSync(join(dest, 'old'), 'utf8')).toBe("old, this run's copy");
  });

  it('a file that cannot be put in place fails alone; the rest of its batch is committed', async () => {
    const dest = fresh();
    // A file where the folder of the second resource should be.
    writeFileSync(join(dest, 'blocked'), 'x');
    let result: { done: string[]; failed: { record: string; reason: string }[] } | null = null;
    const writer = new DurableWriter<string>({ tmpDir: join(dest, '.tmp'), commit: (done, failed) => (result = { done, failed }) });
    for (const [name, final] of [
      ['ok', join(dest, 'ok')],
      ['bad', join(dest, 'blocked', 'bad')],
    ]) {
      const file = writer.tempFile();
      file.add(Buffer.from(name!));
      await file.close();
      writer.stage({ temp: file.path, final: final!, record: name! });
    }
    await writer.flush();
    expect(result!.done).toEqual(['ok']);
    expect(result!.failed.map((f) => f.record)).toEqual(['bad']);
    expect(result!.failed[0]!.reason).toMatch(/could not be put in place/);
    expect(readFileSync(join(dest, 'ok'), 'utf8')).toBe('ok');
    expect(readdirSync(join(dest, '.tmp'))).toEqual([]);
  });

  it('waits for files handed over while still being written; one the disk refused fails alone', async () => {
    const dest = fresh();
    let result: { done: string[]; failed: { record: string; reason: string }[] } | null = null;
    const writer = new DurableWriter<string>({ tmpDir: join(dest, '.tmp'), commit: (done, failed) => (result = { done, failed }) });
    const late = writer.tempFile(Date.UTC(2021, 0, 2));
    late.add(Buffer.from('late bytes'));
    // Handed over before its write finished: the batch must not rename a half-written file.
    writer.stage({ temp: late.path, final: join(dest, 'late'), record: 'late', written: late.close() });
    const refused = writer.tempFile();
    writer.stage({ temp: refused.path, final: join(dest, 'refused'), record: 'refused', written: Promise.reject(new Error('no space left on device')) });
    await writer.flush();
    expect(result!.done).toEqual(['late']);
    expect(result!.failed).toEqual([{ record: 'refused', reason: 'could not be written: the disk is full' }]);
    expect(readFileSync(join(dest, 'late'), 'utf8')).toBe('late bytes');
    expect(statSync(join(dest, 'late')).mtimeMs).toBe(Date.UTC(2021, 0, 2));
    expect(existsSync(join(dest, 'refused'))).toBe(false);
    expect(readdirSync(join(dest, '.tmp'))).toEqual([]);
  });

  it('holds a writer faster than the disk back once two full batches wait to be flushed', async () => {
    const dest = fresh();
    const writer = new DurableWriter<string>({ tmpDir: join(dest, '.tmp'), batchSize: 2, commit: () => undefined });
    // Files whose writes have not ended: the batches that hold them cannot be flushed yet.
    const writes: (() => void)[] = [];
    const stageOne = (n: number) => {
      const file = writer.tempFile();
      writeFileSync(file.path, String(n));
      writer.stage({ temp: file.path, final: join(dest, `f${n}`), record: `f${n}`, written: new Promise<void>((resolve) => writes.push(resolve)) });
    };
    for (let n = 0; n < 4; n++) stageOne(n);
    let drained = false;
    const waiting = writer.drained().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(drained).toBe(false);
    // Once the first batch is flushed, one batch waits: the writer may go on.
    writes[0]!();
    writes[1]!();
    await waiting;
    expect(existsSync(join(dest, 'f0'))).toBe(true);
    for (const w of writes) w();
    await writer.flush();
    expect(readdirSync(dest).filter((f) => f.startsWith('f')).sort()).toEqual(['f0', 'f1', 'f2', 'f3']);
  });
});
