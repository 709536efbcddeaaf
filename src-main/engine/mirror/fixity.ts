// Fixity of one resource (core spec §7 `hash`, `length`): what an entry's rs:md promises, and a meter that hashes and
// counts bytes as they stream past. A resource is `verified` only when its length and every hash given for it match;
// `mismatch` when one of them does not; `unverifiable` when the entry gives a hash or length that cannot be checked
// (malformed, an unknown algorithm) and nothing else disagrees; `unchecked` when the entry promises nothing.
import { createHash, hash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { parseHashes } from '../documents/hash.ts';
import type { HashAlgorithm, RsMd } from '../documents/model.ts';

export type Digests = Partial<Record<HashAlgorithm, string>>;
export type FixityStatus = 'verified' | 'mismatch' | 'unverifiable' | 'unchecked';

export interface Expectation {
  length?: number;
  hashes: Digests;
  /** Why part of the entry's fixity cannot be checked (each a sentence fragment). */
  problems: string[];
}

export interface FixityResult {
  status: FixityStatus;
  length: number;
  /** Every digest computed. */
  digests: Digests;
  /** Why it is not verified (empty when it is). */
  reasons: string[];
}

const NODE_ALGORITHM: Record<HashAlgorithm, string> = { md5: 'md5', 'sha-1': 'sha1', 'sha-256': 'sha256' };

/** What an entry's `rs:md hash` and `length` promise. */
export function expectationOf(md: Pick<RsMd, 'hash' | 'length'>): Expectation {
  const problems: string[] = [];
  let hashes: Digests = {};
  if (md.hash !== undefined) {
    const parsed = parseHashes(md.hash);
    hashes = parsed.hashes;
    problems.push(...parsed.problems.map((p) => `hash ${p}`));
  }
  let length: number | undefined;
  if (md.length !== undefined) {
    const text = md.length.trim();
    if (/^\d{1,15}$/.test(text)) length = Number(text);
    else problems.push(`length "${md.length.slice(0, 40)}" is not a whole number of bytes`);
  }
  return { length, hashes, problems };
}

/** True when the expectation states anything that can be checked or that is broken. */
export function promisesAnything(expected: Expectation): boolean {
  return expected.length !== undefined || Object.keys(expected.hashes).length > 0 || expected.problems.length > 0;
}

/** Bytes a meter holds before it starts hashing: a body this small is hashed in one call when it is complete. */
const ONE_SHOT = 64 * 1024;

/**
 * Hashes and counts bytes; `finish()` compares them with the expectation. A small body (most resources of a mirror)
 * is held and hashed in one call (crypto.hash) at the end, which costs the main thread far less than a Hash object
 * per algorithm fed chunk by chunk; a larger one is hashed as it arrives, holding nothing. A chunk handed to `update`
 * must not change afterwards.
 */
export class FixityMeter {
  readonly expected: Expectation;
  readonly #algorithms: HashAlgorithm[];
  /** Hashing as the bytes arrive (null until the body outgrows ONE_SHOT). */
  #hashers: Hash[] | null = null;
  #held: Uint8Array[] = [];
  #bytes = 0;

  /**
   * `alsoCompute`: digests to record beside the entry's own. Default: md5 when the entry gives no hash (so the
   * inventory still has one), nothing more when it does — md5 runs at half sha-256's speed here and would cost
   * a large download more than its own check.
   */
  constructor(expected: Expectation, alsoCompute?: HashAlgorithm[]) {
    this.expected = expected;
    const own = Object.keys(expected.hashes) as HashAlgorithm[];
    const also = alsoCompute ?? (own.length > 0 ? [] : (['md5'] as HashAlgorithm[]));
    this.#algorithms = also.length === 0 ? own : [...new Set([...own, ...also])];
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** True once more bytes arrived than the entry's length: the download can stop, it will not verify. */
  get overLength(): boolean {
    return this.expected.length !== undefined && this.#bytes > this.expected.length;
  }

  update(chunk: Uint8Array): void {
    this.#bytes += chunk.byteLength;
    if (this.#hashers === null) {
      if (this.#bytes <= ONE_SHOT) {
        this.#held.push(chunk);
        return;
      }
      this.#hashers = this.#algorithms.map((a) => createHash(NODE_ALGORITHM[a]));
      for (const held of this.#held) for (const hash of this.#hashers) hash.update(held);
      this.#held = [];
    }
    for (const hash of this.#hashers) hash.update(chunk);
  }

  finish(): FixityResult {
    const digests: Digests = {};
    if (this.#hashers !== null) {
      this.#algorithms.forEach((a, i) => (digests[a] = this.#hashers![i]!.digest('hex')));
    } else {
      const whole = this.#held.length === 1 ? this.#held[0]! : Buffer.concat(this.#held);
      this.#held = [];
      for (const a of this.#algorithms) digests[a] = hash(NODE_ALGORITHM[a], whole, 'hex');
    }
    return judge(this.expected, this.#bytes, digests);
  }
}

/** Compares a length and digests with an expectation. */
export function judge(expected: Expectation, length: number, digests: Digests): FixityResult {
  const mismatches: string[] = [];
  if (expected.length !== undefined && length !== expected.length) {
    mismatches.push(`${length.toLocaleString('en')} bytes, the list says ${expected.length.toLocaleString('en')}`);
  }
  for (const [algorithm, want] of Object.entries(expected.hashes) as [HashAlgorithm, string][]) {
    const got = digests[algorithm];
    if (got !== undefined && got !== want) mismatches.push(`${algorithm} is ${got}, the list says ${want}`);
  }
  if (mismatches.length > 0) return { status: 'mismatch', length, digests, reasons: mismatches };
  if (expected.problems.length > 0) return { status: 'unverifiable', length, digests, reasons: expected.problems };
  if (expected.length === undefined && Object.keys(expected.hashes).length === 0) {
    return { status: 'unchecked', length, digests, reasons: ['the list gives neither hash nor length'] };
  }
  return { status: 'verified', length, digests, reasons: [] };
}

/**
 * Streams a local file through a meter. Only a regular file is read: a symbolic link is not followed (it could lead
 * out of the mirror, or to /dev/zero), and a FIFO or a device is not read (it could block or never end); either is a
 * mismatch, as a file that is not what the mirror wrote.
 */
export async function meterFile(path: string, expected: Expectation, alsoCompute?: HashAlgorithm[], signal?: AbortSignal): Promise<FixityResult> {
  const notRegular: FixityResult = { status: 'mismatch', length: 0, digests: {}, reasons: ['the local copy is not a regular file (a symbolic link, a FIFO or a device); it was not read'] };
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') return notRegular;
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) return notRegular;
    const meter = new FixityMeter(expected, alsoCompute);
    for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false })) {
      // A file of many gigabytes takes minutes to read: a cancel does not wait for its end.
      signal?.throwIfAborted();
      meter.update(chunk as Buffer);
    }
    return meter.finish();
  } finally {
    await handle.close();
  }
}

/** True when recorded digests and length already satisfy the expectation (no need to read the file again). */
export function recordedMatches(expected: Expectation, length: number | null, digests: Digests): boolean {
  if (expected.problems.length > 0 || length === null) return false;
  const algorithms = Object.keys(expected.hashes) as HashAlgorithm[];
  if (algorithms.length === 0 && expected.length === undefined) return false;
  if (expected.length !== undefined && expected.length !== length) return false;
  return algorithms.every((a) => digests[a] !== undefined && digests[a] === expected.hashes[a]);
}
