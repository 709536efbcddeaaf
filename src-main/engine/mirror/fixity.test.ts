import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FixityMeter, expectationOf, meterFile, recordedMatches } from './fixity.ts';

const BODY = Buffer.from('hello, fixity\n');
const MD5 = createHash('md5').update(BODY).digest('hex');
const SHA1 = createHash('sha1').update(BODY).digest('hex');
const SHA256 = createHash('sha256').update(BODY).digest('hex');

function meter(md: { hash?: string; length?: string }, body = BODY, chunk = 3) {
  const m = new FixityMeter(expectationOf(md));
  for (let i = 0; i < body.length; i += chunk) m.update(body.subarray(i, i + chunk));
  return m.finish();
}

describe('fixity', () => {
  it('gives the same digests for a small body hashed whole and a large one hashed as it arrives, on both sides of the switch', () => {
    for (const size of [0, 1, 2048, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 200 * 1024]) {
      const body = Buffer.alloc(size);
      for (let i = 0; i < size; i++) body[i] = (i * 31 + 7) & 0xff;
      const md5 = createHash('md5').update(body).digest('hex');
      const sha256 = createHash('sha256').update(body).digest('hex');
      for (const chunk of [1000, 16 * 1024, 65 * 1024]) {
        const r = meter({ hash: `md5:${md5} sha-256:${sha256}`, length: String(size) }, body, chunk);
        expect(r.status, `${size} bytes in chunks of ${chunk}`).toBe('verified');
        expect(r.digests).toEqual({ md5, 'sha-256': sha256 });
      }
      expect(meter({}, body, 4096).digests).toEqual({ md5 });
    }
  });

  it('verifies length and every hash given, streamed in pieces', () => {
    const r = meter({ hash: `md5:${MD5} sha-1:${SHA1} sha-256:${SHA256.toUpperCase()}`, length: String(BODY.length) });
    expect(r.status).toBe('verified');
    expect(r.digests).toEqual({ md5: MD5, 'sha-1': SHA1, 'sha-256': SHA256 });
    expect(r.length).toBe(BODY.length);
    expect(meter({ length: String(BODY.length) }).status).toBe('verified');
    // md5 is recorded when the entry gives no hash; beside a given hash it is not computed (it costs twice sha-256).
    expect(meter({ length: String(BODY.length) }).digests).toEqual({ md5: MD5 });
    expect(meter({ hash: `sha-256:${SHA256}` }).digests).toEqual({ 'sha-256': SHA256 });
    const asked = new FixityMeter(expectationOf({ hash: `sha-256:${SHA256}` }), ['md5']);
    asked.update(BODY);
    expect(asked.finish().digests).toEqual({ 'sha-256': SHA256, md5: MD5 });
  });

  it('finds a mismatch of hash or length', () => {
    const wrong = meter({ hash: `md5:${'0'.repeat(32)} sha-256:${SHA256}` });
    expect(wrong.status).toBe('mismatch');
    expect(wrong.reasons[0]).toMatch(/md5 is .* the list says 0{32}/);
    expect(meter({ hash: `md5:${MD5}`, length: '3' }).status).toBe('mismatch');
    // A mismatch wins over an unverifiable token beside it.
    expect(meter({ hash: `md5:${'1'.repeat(32)} sha-512:abc` }).status).toBe('mismatch');
  });

  it('calls malformed or unknown hashes and lengths unverifiable, not mismatch', () => {
    const unknown = meter({ hash: `sha-512:${'a'.repeat(128)}` });
    expect(unknown.status).toBe('unverifiable');
    expect(unknown.reasons.join()).toMatch(/unknown algorithm "sha-512"/);
    expect(meter({ hash: 'md5:xyz' }).status).toBe('unverifiable');
    expect(meter({ hash: `md5:${MD5}`, length: 'ten' }).status).toBe('unverifiable');
    expect(meter({ hash: `md5:${MD5} md5` }).status).toBe('unverifiable');
  });

  it('leaves a resource without hash or length unchecked', () => {
    expect(meter({}).status).toBe('unchecked');
  });

  it('knows when more bytes arrived than promised', () => {
    const m = new FixityMeter(expectationOf({ length: '2' }));
    m.update(Buffer.from('ab'));
    expect(m.overLength).toBe(false);
    m.update(Buffer.from('c'));
    expect(m.overLength).toBe(true);
  });

  it('meters a file, and matches recorded digests without reading', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fixity-'));
    const file = join(dir, 'f');
    writeFileSync(file, BODY);
    const expected = expectationOf({ hash: `md5:${MD5}`, length: String(BODY.length) });
    expect((await meterFile(file, expected)).status).toBe('verified');
    expect(recordedMatches(expected, BODY.length, { md5: MD5 })).toBe(true);
    expect(recordedMatches(expected, BODY.length + 1, { md5: MD5 })).toBe(false);
    expect(recordedMatches(expectationOf({ hash: `sha-256:${SHA256}` }), BODY.length, { md5: MD5 })).toBe(false);
    expect(recordedMatches(expectationOf({}), BODY.length, { md5: MD5 })).toBe(false);
  });

  it('stops reading a file when its signal is aborted, part-way through', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fixity-')), 'big');
    writeFileSync(file, Buffer.alloc(8 << 20, 1));
    const controller = new AbortController();
    const expected = expectationOf({ length: String(8 << 20) });
    const reading = meterFile(file, expected, undefined, controller.signal);
    controller.abort();
    await expect(reading).rejects.toThrow(/abort/i);
    expect((await meterFile(file, expected, undefined, new AbortController().signal)).status).toBe('verified');
  });

  it('reads only regular files: a FIFO, a link to /dev/zero or to a file elsewhere is a mismatch, read not at all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fixity-'));
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'fixity-out-')), 'f');
    writeFileSync(elsewhere, BODY);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    symlinkSync('/dev/zero', join(dir, 'zero'));
    symlinkSync(elsewhere, join(dir, 'link'));
    const expected = expectationOf({ hash: `md5:${MD5}`, length: String(BODY.length) });
    for (const name of ['fifo', 'zero', 'link']) {
      const result = await meterFile(join(dir, name), expected);
      expect(result, name).toMatchObject({ status: 'mismatch', reasons: [expect.stringMatching(/not a regular file/)] });
    }
    expect((await meterFile(elsewhere, expected)).status).toBe('verified');
  });
});

