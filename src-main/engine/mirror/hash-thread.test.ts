// Hashing off the main thread gives the same digests as node:crypto, for any split of the bytes, with several hashes
// under way at once, and asks the caller to wait when the thread falls far behind.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StreamHash } from './hash-thread.ts';

const hex = (algorithm: string, data: Buffer) => createHash(algorithm).update(data).digest('hex');

describe('StreamHash', () => {
  it('matches node:crypto for every size, however the bytes are split', async () => {
    for (const size of [0, 1, (1 << 20) - 1, 1 << 20, 3.5 * (1 << 20) + 17]) {
      const data = randomBytes(size);
      const hash = new StreamHash(['md5', 'sha256', 'sha1']);
      for (let at = 0; at < size; at += 70_001) {
        const wait = hash.update(data.subarray(at, at + 70_001));
        if (wait) await wait;
      }
      expect(await hash.digest(), `size ${size}`).toEqual([hex('md5', data), hex('sha256', data), hex('sha1', data)]);
    }
  });

  it('keeps hashes under way at the same time apart', async () => {
    const a = randomBytes(2_500_000);
    const b = randomBytes(1_700_000);
    const ha = new StreamHash(['md5']);
    const hb = new StreamHash(['md5']);
    for (let at = 0; at < Math.max(a.length, b.length); at += 100_000) {
      await ha.update(a.subarray(at, at + 100_000));
      await hb.update(b.subarray(at, at + 100_000));
    }
    const [da, db] = await Promise.all([ha.digest(), hb.digest()]);
    expect(da).toEqual([hex('md5', a)]);
    expect(db).toEqual([hex('md5', b)]);
  });

  it('asks the caller to wait when far ahead, and a discarded hash is simply dropped', async () => {
    const hash = new StreamHash(['sha256']);
    const block = randomBytes(1 << 20);
    let waited = false;
    for (let i = 0; i < 40 && !waited; i++) {
      const wait = hash.update(block);
      if (wait) {
        waited = true;
        await wait;
      }
    }
    expect(waited).toBe(true);
    hash.discard();
    const after = new StreamHash(['md5']);
    after.update(Buffer.from('still works'));
    expect(await after.digest()).toEqual([hex('md5', Buffer.from('still works'))]);
  });
});
