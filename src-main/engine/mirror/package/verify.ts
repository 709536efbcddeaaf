// Fixity while streaming: a pass-through that hashes and counts every byte on its way to the sink and ends only if
// the bytes are what the manifest and the ZIP say. A sink therefore sees its stream end cleanly iff the bitstream is
// verified; on any mismatch the stream errors instead, and a sink that writes a temporary file throws it away.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { HashAlgorithm } from '../../documents/model.ts';
import type { EntryFailureCode } from './model.ts';
import { hashThread, type HashLane } from './hash-thread.ts';

const NODE_ALGORITHM: Record<HashAlgorithm, string> = { md5: 'md5', 'sha-1': 'sha1', 'sha-256': 'sha256' };

/** A fixity failure found while streaming; `code` says which check. */
export class FixityError extends Error {
  code: EntryFailureCode;
  constructor(code: EntryFailureCode, message: string) {
    super(message);
    this.name = 'FixityError';
    this.code = code;
  }
}

export interface Expected {
  /** Exact number of bytes (the central directory's uncompressed size, already checked against the manifest). */
  length: number;
  /** The central directory's CRC-32 of the uncompressed bytes. */
  crc32: number;
  /** The manifest's digests. */
  hashes: Partial<Record<HashAlgorithm, string>>;
  /** Algorithms to compute even without an expected value (to record them). */
  alsoCompute?: HashAlgorithm[];
  /** For messages. */
  label: string;
}

/** Bitstreams at least this long are hashed on the hashing thread (hash-thread.ts); smaller ones are not worth a lane. */
const LANE_FROM = 1 << 20;

export class VerifyStream extends Transform {
  readonly #expected: Expected;
  readonly #algorithms: HashAlgorithm[];
  readonly #hashers: [HashAlgorithm, Hash][];
  /** Set when the digests are computed on the hashing thread instead of here. */
  #lane: HashLane | null;
  #crc = 0;
  readonly #withCrc: boolean;
  #bytes = 0;
  #digests: Partial<Record<HashAlgorithm, string>> | null = null;

  constructor(expected: Expected) {
    // Chunks of the inflater or the file reader pass through as they are; no extra buffering.
    super({ highWaterMark: 1 << 20 });
    this.#expected = expected;
    this.#withCrc = crcNeeded(expected);
    const algorithms = new Set<HashAlgorithm>([...(Object.keys(expected.hashes) as HashAlgorithm[]), ...(expected.alsoCompute ?? [])]);
    this.#algorithms = [...algorithms];
    this.#lane =
      expected.length >= LANE_FROM
        ? hashThread.acquire(this.#algorithms.map((a) => NODE_ALGORITHM[a]), this.#withCrc)
        : null;
    this.#hashers = this.#lane === null ? this.#algorithms.map((a) => [a, createHash(NODE_ALGORITHM[a])]) : [];
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The digests, once the stream ended verified. */
  get digests(): Partial<Record<HashAlgorithm, string>> | null {
    return this.#digests;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#bytes += chunk.length;
    if (this.#bytes > this.#expected.length) {
      callback(
        new FixityError(
          'size-mismatch',
          `${this.#expected.label}: more bytes than the ${this.#expected.length.toLocaleString('en')} the package declares; stopped reading`,
        ),
      );
      return;
    }
    if (this.#lane !== null) {
      const wait = this.#lane.update(chunk);
      if (wait === undefined) callback(null, chunk);
      else wait.then(() => callback(null, chunk), (err: Error) => callback(err));
      return;
    }
    if (this.#withCrc) this.#crc = crc32(chunk, this.#crc);
    for (const [, hash] of this.#hashers) hash.update(chunk);
    callback(null, chunk);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.#lane?.release();
    this.#lane = null;
    callback(err);
  }

  override _flush(callback: TransformCallback): void {
    const lane = this.#lane;
    // From here the lane is digest()'s to give back: _destroy must not release it again (it may be another's by then).
    this.#lane = null;
    if (lane === null) {
      const digests: Partial<Record<HashAlgorithm, string>> = {};
      for (const [algorithm, hash] of this.#hashers) digests[algorithm] = hash.digest('hex');
      this.#verdict(this.#crc, digests, callback);
      return;
    }
    lane.digest().then(
      ({ digests, crc }) => {
        const named: Partial<Record<HashAlgorithm, string>> = {};
        this.#algorithms.forEach((algorithm, i) => (named[algorithm] = digests[i]));
        this.#verdict(crc, named, callback);
      },
      (err: Error) => callback(new FixityError('corrupt', `${this.#expected.label}: its digests could not be computed: ${err.message}`)),
    );
  }

  #verdict(crc: number, digests: Partial<Record<HashAlgorithm, string>>, callback: TransformCallback): void {
    const failure = checkBitstream(this.#expected, this.#bytes, crc, digests);
    if (failure !== null) {
      callback(failure);
      return;
    }
    this.#digests = digests;
    callback();
  }

}

/**
 * The verdict on a whole bitstream: null when its length, every digest the manifest gives and, where it gives none,
 * the CRC-32 hold (`crc` is not looked at when crcNeeded is false: it need not have been computed).
 */
export function checkBitstream(expected: Expected, bytes: number, crc: number, digests: Partial<Record<HashAlgorithm, string>>): FixityError | null {
  const label = expected.label;
  if (bytes !== expected.length) {
    return new FixityError('length-mismatch', `${label}: ${bytes.toLocaleString('en')} bytes, expected ${expected.length.toLocaleString('en')}`);
  }
  if (crcNeeded(expected) && crc >>> 0 !== expected.crc32 >>> 0) {
    return new FixityError('crc-mismatch', `${label}: the CRC-32 of the bytes does not match the package's; the package is damaged`);
  }
  for (const [algorithm, want] of Object.entries(expected.hashes) as [HashAlgorithm, string][]) {
    if (digests[algorithm] !== want) return new FixityError('hash-mismatch', `${label}: ${algorithm} is ${digests[algorithm]}, the manifest says ${want}`);
  }
  return null;
}

/**
 * Whether the ZIP's CRC-32 must be computed: only when the manifest gives no digest. A digest the manifest gives is
 * checked over the same bytes and is the stronger check (a damaged package fails it too, as a hash mismatch); the
 * CRC-32 then only cost time on the thread that hashes (a tenth of it for a 1 GiB dump).
 */
export function crcNeeded(expected: Expected): boolean {
  return Object.keys(expected.hashes).length === 0;
}

/** Node's names of the algorithms. */
export function nodeAlgorithm(algorithm: HashAlgorithm): string {
  return NODE_ALGORITHM[algorithm];
}
