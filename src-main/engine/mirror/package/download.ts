// Downloads one package of a Resource Dump or Change Dump to disk, resumable: bytes go to `<dest>.part`, what is
// needed to resume (the URL and the validator) to `<dest>.part.json`; an interrupted download continues with
// `Range` + `If-Range`, so a package that changed meanwhile comes back whole (200) and is restarted cleanly. The
// Dump entry's rs:md `length` and `hash` are the package's fixity: a server that announces another length is
// refused before a byte is written, and the finished file is renamed into place only when both match.
// A package is asked for as it is (Accept-Encoding: identity): the HTTP client decodes a coded answer, and a Range
// counts bytes of the coded representation, not of the decoded file on disk. A server that codes it anyway is
// served, but what it sent is never resumed with Range: a broken-off download of it starts over.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { clip } from '../../clip.ts';
import { parseHashes, type HashAlgorithm } from '../../documents/index.ts';
import { HttpStatusError, NetworkError, type Http } from '../../http/index.ts';
import { FileHasher } from './file-hasher.ts';
import { partWriter, type PartProgress } from './part.ts';
import { SlowBody, slowBodyWindow } from '../slow-body.ts';
import { isDiskFull } from '../disk-full.ts';

export interface DownloadOptions {
  http: Http;
  url: string;
  /** Final path of the package; `<dest>.part` and `<dest>.part.json` live beside it while it downloads. */
  dest: string;
  /** The Dump entry's rs:md `length` and `hash`, as written. */
  length?: string;
  hash?: string;
  signal?: AbortSignal;
  /** Epoch ms by which the whole download, resumptions included, must be done. */
  deadlineAt?: number;
  /** Resumptions within this call after a transfer broke off; each must have brought new bytes. Default 5. */
  maxResumes?: number;
  onProgress?: (bytes: number, total: number | null) => void;
  /** Told what is on disk as it is written, for a reader that follows the download (growing.ts). */
  part?: PartProgress;
  /**
   * Asked, when the Dump gives the package's length, whether what is left to download fits on the disk: a sentence
   * saying why not refuses the download ('no-room') before a byte is fetched. Without a length the run's reserve,
   * polled, is all that stops a download.
   */
  room?: (needed: number, resumed: number) => Promise<string | null>;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  /** Digests of the whole package for every algorithm the Dump gave. */
  digests: Partial<Record<HashAlgorithm, string>>;
  /** Bytes that were already on disk from an earlier, interrupted download and were not fetched again. */
  resumedFrom: number;
  /** Resumptions with Range in this call. */
  resumes: number;
  /** Times the download started over (the server ignored Range, or the package changed). */
  restarts: number;
  /** The file was already complete and verified; nothing was fetched. */
  reused: boolean;
  /**
   * What the person should know, in sentences: a hash of the Dump that could not be used (the package is then checked by
   * length only), a restart because the server answered a resumption with another version.
   */
  problems: string[];
}

/** `no-room`: the disk has no room for what is left to download of the length the Dump gives (nothing was fetched). */
export type DownloadErrorCode = 'length-mismatch' | 'hash-mismatch' | 'bad-length' | 'bad-content-range' | 'io' | 'no-room';

export class PackageDownloadError extends Error {
  code: DownloadErrorCode;
  url: string;
  constructor(code: DownloadErrorCode, message: string, url: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PackageDownloadError';
    this.code = code;
    this.url = url;
  }
}

interface PartMeta {
  url: string;
  /** A strong ETag or a Last-Modified date: what If-Range is sent with. */
  validator: string | null;
  /** The Content-Encoding the part was sent with, decoded before it was written: such a part cannot be resumed. */
  coded?: string;
}

/** A content-coding other than identity, or null. */
function codingOf(headers: Record<string, string>): string | null {
  const coding = headers['content-encoding']?.trim();
  return coding === undefined || coding === '' || coding.toLowerCase() === 'identity' ? null : coding;
}

const NODE_ALGORITHM: Record<HashAlgorithm, string> = { md5: 'md5', 'sha-1': 'sha1', 'sha-256': 'sha256' };

/** Packages the Dump says are at least this large are hashed off the main thread (a thread costs a few ms to start). */
const HASH_OFF_THREAD_FROM = 4 * 1024 * 1024;

async function sizeOf(path: string): Promise<number | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? s.size : null;
  } catch {
    return null;
  }
}

async function readMeta(path: string): Promise<PartMeta | null> {
  try {
    const meta = JSON.parse(await readFile(path, 'utf8')) as PartMeta;
    return typeof meta.url === 'string' ? meta : null;
  } catch {
    return null;
  }
}

function hashers(algorithms: HashAlgorithm[]): [HashAlgorithm, Hash][] {
  return algorithms.map((a) => [a, createHash(NODE_ALGORITHM[a])]);
}

/** Feeds the first `bytes` of a file to the hashers (the part already downloaded, before appending to it). */
async function hashFile(path: string, hs: [HashAlgorithm, Hash][]): Promise<void> {
  if (hs.length === 0) return;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    for (const [, h] of hs) h.update(chunk as Buffer);
  }
}

/** `bytes START-END/TOTAL` → numbers (TOTAL null for `*`), or null when malformed. */
export function parseContentRange(value: string): { start: number; end: number; total: number | null } | null {
  const m = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(value);
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (end < start) return null;
  return { start, end, total: m[3] === '*' ? null : Number(m[3]) };
}

/** A validator usable in If-Range: a strong ETag, else Last-Modified (RFC 9110 §13.1.5); weak ETags cannot be. */
function validatorOf(headers: Record<string, string>): string | null {
  const etag = headers.etag;
  if (etag !== undefined && !etag.startsWith('W/')) return etag;
  return headers['last-modified'] ?? null;
}

function digestsOf(hs: [HashAlgorithm, Hash][]): Partial<Record<HashAlgorithm, string>> {
  const out: Partial<Record<HashAlgorithm, string>> = {};
  for (const [a, h] of hs) out[a] = h.digest('hex');
  return out;
}

export async function downloadPackage(options: DownloadOptions): Promise<DownloadResult> {
  try {
    return await download(options);
  } catch (err) {
    options.part?.fail(err as Error);
    throw err;
  }
}

async function download(options: DownloadOptions): Promise<DownloadResult> {
  const { http, url, dest, signal } = options;
  const part = `${dest}.part`;
  const metaPath = `${dest}.part.json`;
  let expectedLength: number | null = null;
  if (options.length !== undefined) {
    if (!/^\s*\d+\s*$/.test(options.length)) {
      throw new PackageDownloadError('bad-length', `The Dump gives the package ${clip(url)} a length that is not a number: ${clip(JSON.stringify(options.length))}`, url);
    }
    expectedLength = Number(options.length);
  }
  const parsed = options.hash === undefined ? { hashes: {}, problems: [], notes: [] } : parseHashes(options.hash);
  const expectedHashes = parsed.hashes;
  const problems = parsed.problems.map((p) => `The Dump's hash for ${clip(url)} cannot be used (${p}); the package was checked by ${options.length === undefined ? 'nothing but the manifest inside it' : 'its length only'}`);
  const algorithms = Object.keys(expectedHashes) as HashAlgorithm[];

  const verify = (digests: Partial<Record<HashAlgorithm, string>>): string | null => {
    for (const a of algorithms) {
      if (digests[a] !== expectedHashes[a]) return `${a} of the package ${clip(url)} is ${digests[a]}, the Dump says ${expectedHashes[a]}`;
    }
    return null;
  };

  // A package completed by an earlier run: verified again, not fetched again.
  const finalSize = await sizeOf(dest);
  if (finalSize !== null && (expectedLength === null || finalSize === expectedLength) && algorithms.length > 0) {
    const hs = hashers(algorithms);
    await hashFile(dest, hs);
    const digests = digestsOf(hs);
    if (verify(digests) === null) {
      options.part?.complete(dest, finalSize);
      return { path: dest, bytes: finalSize, digests, resumedFrom: finalSize, resumes: 0, restarts: 0, reused: true, problems };
    }
  }
  if (finalSize !== null) await rm(dest, { force: true });

  let meta = await readMeta(metaPath);
  let offset = meta?.url === url ? ((await sizeOf(part)) ?? 0) : 0;
  // Resuming without a validator is only safe when the hash will catch a package that changed meanwhile.
  if (offset > 0 && meta?.validator == null && algorithms.length === 0) offset = 0;
  if (expectedLength !== null && offset > expectedLength) offset = 0;
  // Decoded bytes of a coded answer: a Range of them would name bytes of the coded representation.
  let restarts = 0;
  let startedOver = false;
  const startOver = (coding: string) => {
    restarts++;
    if (startedOver) return;
    startedOver = true;
    problems.push(`${clip(url)} was sent coded (Content-Encoding: ${clip(coding, 40)}) although asked for as it is; a download of it broken off cannot be resumed where it stopped, so it was downloaded again from the start`);
  };
  if (offset > 0 && meta?.coded !== undefined) {
    startOver(meta.coded);
    offset = 0;
  }
  if (offset === 0) {
    await rm(part, { force: true });
    meta = null;
  }
  if (expectedLength !== null && options.room !== undefined) {
    const why = await options.room(expectedLength - offset, offset);
    if (why !== null) throw new PackageDownloadError('no-room', why, url);
  }
  const resumedFrom = offset;
  let resumes = 0;
  const maxResumes = options.maxResumes ?? 5;

  for (;;) {
    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (offset > 0) {
      headers.range = `bytes=${offset}-`;
      if (meta?.validator) headers['if-range'] = meta.validator;
    }
    const before = offset;
    try {
      // The download's own deadline, when given, replaces the client's per-fetch one (5 min by default): a large
      // package may rightly take longer.
      const deadlineMs = options.deadlineAt === undefined ? undefined : Math.max(0, options.deadlineAt - Date.now());
      const response = await http.get(url, { signal, headers, deadlineAt: options.deadlineAt, deadlineMs, accept: 'application/zip, */*' });
      let append = false;
      const coding = codingOf(response.headers);
      if (response.status === 206 && offset > 0 && coding !== null) {
        // The rest of the coded representation, decoded from its middle: never spliced onto the part.
        await response.discard();
        await rm(part, { force: true });
        offset = 0;
        meta = null;
        startOver(coding);
        continue;
      }
      if (response.status === 206 && offset > 0) {
        const range = parseContentRange(response.headers['content-range'] ?? '');
        if (range === null || range.start !== offset || (expectedLength !== null && range.total !== null && range.total !== expectedLength)) {
          await response.discard();
          if (range !== null && range.total !== null && expectedLength !== null && range.total !== expectedLength) {
            throw new PackageDownloadError(
              'length-mismatch',
              `The server says the package ${clip(url)} is ${range.total.toLocaleString('en')} bytes, the Dump says ${expectedLength.toLocaleString('en')}; refused`,
              url,
            );
          }
          throw new PackageDownloadError('bad-content-range', `The server answered a resumption of ${clip(url)} with an unusable Content-Range ${clip(JSON.stringify(response.headers['content-range'] ?? ''))}`, url);
        }
        // If-Range was ignored in all but name: the rest of another version would be spliced onto this one. Validators
        // of the same kind are compared (an ETag with an ETag, a date with a date); each such restart counts as a
        // resumption, so a server whose ETags differ from node to node does not restart it for ever.
        const begun = meta?.validator ?? null;
        const byEtag = begun !== null && begun.startsWith('"');
        const now = begun === null ? undefined : byEtag ? response.headers.etag : response.headers['last-modified'];
        if (begun !== null && now !== undefined && !(byEtag && now.startsWith('W/')) && now !== begun) {
          if (resumes >= maxResumes) {
            await response.discard();
            throw new PackageDownloadError('bad-content-range', `${clip(url)} answered each resumption with another version (${clip(now, 80)}, not ${clip(begun, 80)}); given up`, url);
          }
          resumes++;
          await response.discard();
          await rm(part, { force: true });
          offset = 0;
          meta = null;
          restarts++;
          problems.push(`${clip(url)} answered a resumption with another version (${clip(now, 80)}, not ${clip(begun, 80)}); downloaded again from the start`);
          continue;
        }
        append = true;
      } else if (response.status === 416 && offset > 0) {
        // The part no longer fits what the server has: start over.
        await response.discard();
        await rm(part, { force: true });
        offset = 0;
        meta = null;
        restarts++;
        continue;
      } else if (response.status === 200) {
        if (offset > 0) restarts++;
        offset = 0;
      } else {
        await response.discard();
        throw new HttpStatusError(response.status, response.statusText, response.url);
      }
      if (!append) {
        const declared = response.headers['content-length'];
        if (expectedLength !== null && declared !== undefined && !response.headers['content-encoding'] && Number(declared) !== expectedLength) {
          await response.discard();
          throw new PackageDownloadError(
            'length-mismatch',
            `The server sends the package ${clip(url)} as ${Number(declared).toLocaleString('en')} bytes, the Dump says ${expectedLength.toLocaleString('en')}; refused`,
            url,
          );
        }
        meta = coding === null ? { url, validator: validatorOf(response.headers) } : { url, validator: validatorOf(response.headers), coded: coding };
        await writeFile(metaPath, JSON.stringify(meta));
      }
      const limit = expectedLength;
      // A large package is hashed by a worker that follows the part file (file-hasher.ts), a small one here.
      const hasher = algorithms.length > 0 && (limit ?? 0) >= HASH_OFF_THREAD_FROM ? new FileHasher(part, algorithms.map((a) => NODE_ALGORITHM[a]), append ? offset : 0) : null;
      const hs = hasher ? [] : hashers(algorithms);
      if (append && !hasher) await hashFile(part, hs);
      options.part?.begin(part, offset);
      let written = offset;
      let onDisk = offset;
      // A transfer that breaks off ends the file cleanly, so every byte that arrived is on disk to resume from
      // (an error thrown through the pipeline would destroy the file stream with writes still queued).
      let broke: unknown = null;
      await pipeline(
        async function* () {
          try {
            const slow = new SlowBody(slowBodyWindow(http.timeoutMs));
            for await (const chunk of response.body) {
              written += chunk.byteLength;
              slow.bytes += chunk.byteLength;
              // Checked as bytes arrive: the idle timeout ends a silence first, so they arrive at least that often.
              const tooSlow = slow.check(Date.now());
              if (tooSlow !== null) throw new NetworkError('timeout', `${clip(url)} ${tooSlow}`, url);
              if (limit !== null && written > limit) {
                throw new PackageDownloadError('length-mismatch', `The package ${clip(url)} is longer than the ${limit.toLocaleString('en')} bytes the Dump gives; refused`, url);
              }
              for (const [, h] of hs) h.update(chunk);
              options.onProgress?.(written, limit);
              yield chunk;
            }
          } catch (err) {
            if (err instanceof PackageDownloadError) throw err;
            broke = err;
          }
        },
        partWriter(part, append ? 'a' : 'w', (n) => {
          onDisk += n;
          options.part?.wrote(n);
          hasher?.written(onDisk);
        }),
      ).catch((err: unknown) => {
        hasher?.close();
        throw err;
      });
      if (broke !== null) {
        hasher?.close();
        throw broke;
      }
      offset = written;
      if (limit !== null && written !== limit) {
        hasher?.close();
        throw new PackageDownloadError('length-mismatch', `The package ${clip(url)} ended after ${written.toLocaleString('en')} bytes, the Dump gives ${limit.toLocaleString('en')}; refused`, url);
      }
      let digests: Partial<Record<HashAlgorithm, string>>;
      if (hasher) {
        const list = await hasher.digests(written).catch((err: unknown) => {
          throw new PackageDownloadError('io', `${clip(url)}: ${(err as Error).message}`, url, { cause: err });
        });
        digests = Object.fromEntries(algorithms.map((a, i) => [a, list[i]!]));
      } else digests = digestsOf(hs);
      const mismatch = verify(digests);
      if (mismatch !== null) {
        await rm(part, { force: true });
        await rm(metaPath, { force: true });
        throw new PackageDownloadError('hash-mismatch', `${mismatch}; the download was thrown away`, url);
      }
      await rename(part, dest);
      options.part?.complete(dest, written);
      await rm(metaPath, { force: true });
      return { path: dest, bytes: written, digests, resumedFrom, resumes, restarts, reused: false, problems };
    } catch (err) {
      // A transfer that broke off after bringing bytes is resumed; anything else is final.
      const size = (await sizeOf(part)) ?? 0;
      const broken = err instanceof NetworkError && err.code !== 'http-status' && err.code !== 'aborted' && err.code !== 'bad-url';
      const pastDeadline = options.deadlineAt !== undefined && Date.now() >= options.deadlineAt;
      if (broken && size > before && resumes < maxResumes && !pastDeadline && !signal?.aborted && meta !== null && (meta.validator !== null || algorithms.length > 0)) {
        resumes++;
        if (meta.coded !== undefined) {
          await rm(part, { force: true });
          startOver(meta.coded);
          offset = 0;
          meta = null;
        } else offset = size;
        continue;
      }
      // A part kept on a disk it filled would keep it full after the run, for the computer's other programs too: it goes
      // (the disk's reserve, disk-reserve.ts, is there to stop a run before that; a small disk fills between its looks).
      if ((err instanceof PackageDownloadError && err.code === 'length-mismatch') || isDiskFull(err)) {
        await rm(part, { force: true });
        await rm(metaPath, { force: true });
      }
      throw err;
    }
  }
}
