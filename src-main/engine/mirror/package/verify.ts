// Fixity while streaming: a pass-through that hashes and counts every byte on its way to the sink and ends only if
// the bytes are what the manifest and the ZIP say. A sink therefore sees its stream end cleanly iff the bitstream is
// verified; on any mismatch the stream errors instead, and a sink that writes a temporary file throws it away.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import type { HashAlgorithm } from '../../documents/model.ts';
import type { EntryFailureCode } from './model.ts';

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

export class VerifyStream extends Transform {
  readonly #expected: Expected;
  readonly #hashers: [HashAlgorithm, Hash][];
  #crc = 0;
  #bytes = 0;
  #digests: Partial<Record<HashAlgorithm, string>> | null = null;

  constructor(expected: Expected) {
    // Chunks of the inflater or the file reader pass through as they are; no extra buffering.
    super({ highWaterMark: 1 << 20 });
    this.#expected = expected;
    const algorithms = new Set<HashAlgorithm>([...(Object.keys(expected.hashes) as HashAlgorithm[]), ...(expected.alsoCompute ?? [])]);
    this.#hashers = [...algorithms].map((a) => [a, createHash(NODE_ALGORITHM[a])]);
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
    this.#crc = crc32(chunk, this.#crc);
    for (const [, hash] of this.#hashers) hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const label = this.#expected.label;
    if (this.#bytes !== this.#expected.length) {
      callback(
        new FixityError(
          'length-mismatch',
          `${label}: ${this.#bytes.toLocaleString('en')} bytes, expected ${this.#expected.length.toLocaleString('en')}`,
        ),
      );
      return;
    }
    if (this.#crc >>> 0 !== this.#expected.crc32 >>> 0) {
      callback(new FixityError('crc-mismatch', `${label}: the CRC-32 of the bytes does not match the package's; the package is damaged`));
      return;
    }
    const digests: Partial<Record<HashAlgorithm, string>> = {};
    for (const [algorithm, hash] of this.#hashers) digests[algorithm] = hash.digest('hex');
    for (const [algorithm, want] of Object.entries(this.#expected.hashes) as [HashAlgorithm, string][]) {
      if (digests[algorithm] !== want) {
        callback(new FixityError('hash-mismatch', `${label}: ${algorithm} is ${digests[algorithm]}, the manifest says ${want}`));
        return;
      }
    }
    this.#digests = digests;
    callback();
  }
}
