// Changes delivered as patches (core spec §14.4, rel="http://www.openarchives.org/rs/terms/patch"): a JSON Patch
// (RFC 6902, type application/json-patch+json, or application/json-patch as the spec's Example 27 has it) is applied to the mirror's copy of a JSON resource instead of fetching
// the whole resource. The entry's hash and length describe the resource after the change, so the patched copy is
// checked against them and written like any download (temporary file, durable batch, inventory). On any failure —
// no usable local copy, the patch cannot be had or applied, the result does not match — the whole resource is
// fetched instead, and a note says why. Patches of other types are not applied: the resource is fetched whole.
import { constants } from 'node:fs';
import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import jsonpatch, { type Operation } from 'fast-json-patch';
import { clip } from '../clip.ts';
import type { Entry } from '../documents/model.ts';
import type { Applier } from './apply.ts';
import { resourceSignal, type Fetcher } from './fetcher.ts';
import { FixityMeter, expectationOf, promisesAnything, recordedMatches, type FixityResult } from './fixity.ts';
import type { MirrorState } from './state.ts';
import { storedPathProblem } from './within-folder.ts';

export const PATCH_REL = 'http://www.openarchives.org/rs/terms/patch';
export const JSON_PATCH_TYPE = 'application/json-patch+json';
/** The media types of a JSON Patch: RFC 6902's, and the one the ResourceSync spec names (§14.4, Example 27). */
const JSON_PATCH_TYPES = new Set([JSON_PATCH_TYPE, 'application/json-patch']);
/** Largest local copy patched in memory, and largest patch read; bigger ones are fetched whole. */
export const MAX_PATCHED_BYTES = 32 * 1024 * 1024;
export const MAX_PATCH_BYTES = 8 * 1024 * 1024;

export interface JsonPatcherOptions {
  applier: Applier;
  fetcher: Fetcher;
  state: MirrorState;
  dest: string;
  dryRun: boolean;
  signal?: AbortSignal;
  onNote?: (note: string) => void;
}

class PatchFailure extends Error {}

function isJsonType(type: string | null | undefined): boolean {
  if (!type) return false;
  const t = type.split(';')[0]!.trim().toLowerCase();
  return (t === 'application/json' || t.endsWith('+json')) && !JSON_PATCH_TYPES.has(t);
}

/** The ways a JSON document is commonly written out: the original's own style first. */
function serializations(value: unknown, original: string): Buffer[] {
  const newline = original.endsWith('\n');
  const indent = /^[[{]\r?\n(\t|[ ]+)\S/.exec(original)?.[1] ?? '';
  const styles: [string, boolean][] = [[indent, newline]];
  for (const i of ['', '  ', '    ', '\t']) for (const n of [true, false]) if (!(i === indent && n === newline)) styles.push([i, n]);
  return styles.map(([i, n]) => Buffer.from(JSON.stringify(value, null, i === '' ? undefined : i) + (n ? '\n' : '')));
}

/**
 * Checks an operation as fast-json-patch's validator does, without the copy of the whole document its check of a
 * `move` or `copy` makes (it tries the `from` pointer on a deep clone of the document): a patch of thousands of such
 * operations on a JSON resource of a few MiB cost as many copies of it, minutes to hours with the event loop blocked
 * (no pause or cancel heard meanwhile).
 */
function validate(operation: Operation, index: number, document: unknown, existingPath: string): void {
  if (document === undefined || (operation.op !== 'move' && operation.op !== 'copy')) return jsonpatch.validator(operation, index, document, existingPath);
  jsonpatch.validator(operation, index);
  if (!resolves(document, operation.from)) {
    throw new jsonpatch.JsonPatchError('Cannot perform the operation from a path that does not exist', 'OPERATION_FROM_UNRESOLVABLE', index, operation, document);
  }
}

/** The checks of `path` against the document alone: for the parts of a `move`, whose value is JSON already. */
function validatePath(operation: Operation, index: number, document: unknown, existingPath: string): void {
  jsonpatch.validator({ ...operation, value: null } as Operation, index, document, existingPath);
}

function resolves(document: unknown, pointer: string): boolean {
  try {
    return jsonpatch.getValueByPointer(document, pointer) !== undefined;
  } catch {
    return false;
  }
}

/**
 * Applies one operation to the document (changed in place). A `move` is applied as RFC 6902 §4.4 defines it, a removal
 * at `from` and an addition at `path`: fast-json-patch's own deep-clones whatever value it replaces, a cost as large
 * as the document per operation.
 */
function applyOne(document: unknown, op: Operation, index: number): unknown {
  if (op === null || typeof op !== 'object' || op.op !== 'move') return jsonpatch.applyOperation(document, op, validate, true, true, index).newDocument;
  validate(op, index, document, op.path);
  if (op.from === op.path) return document;
  if (op.path.startsWith(`${op.from}/`)) {
    throw new jsonpatch.JsonPatchError('Cannot move a value into one of its own children', 'OPERATION_PATH_INVALID', index, op, document);
  }
  const removed: unknown = jsonpatch.applyOperation(document, { op: 'remove', path: op.from }, validatePath, true, true, index).removed;
  return jsonpatch.applyOperation(document, { op: 'add', path: op.path, value: removed }, validatePath, true, true, index).newDocument;
}

/**
 * The local copy's bytes, when it is still a file of the recorded length. Anything else is not the copy to patch, and is
 * not read: a FIFO put in its place would keep the read (and the run) waiting for a writer for ever, a link to
 * /dev/zero would fill the memory, a link out of the mirror would read someone's file. (Opened without following a
 * link and without blocking, then judged by what was opened.)
 */
async function readLocalCopy(file: string, length: number | null): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new PatchFailure('the local copy is not the one the mirror recorded');
    throw new PatchFailure(`the local copy cannot be read: ${(err as Error).message}`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || (length !== null && stat.size !== length)) throw new PatchFailure('the local copy is not the one the mirror recorded');
    // The row's length was checked against the bound, but a row may record none (a file an interrupted run left in
    // place): the file itself, then, before it is read whole.
    if (stat.size > MAX_PATCHED_BYTES) throw new PatchFailure(`the local copy is over ${MAX_PATCHED_BYTES / 1048576} MiB`);
    return await handle.readFile();
  } catch (err) {
    if (err instanceof PatchFailure) throw err;
    throw new PatchFailure(`the local copy cannot be read: ${(err as Error).message}`);
  } finally {
    await handle.close();
  }
}

export class JsonPatcher {
  /** Resources brought up to date by a patch. */
  patched = 0;
  readonly #o: JsonPatcherOptions;

  constructor(options: JsonPatcherOptions) {
    this.#o = options;
  }

  /** Applies one created/updated change: by its JSON Patch when it has one that works, else by a full fetch. */
  async apply(entry: Entry): Promise<void> {
    const link = entry.links.find((l) => l.rel === PATCH_REL);
    if (link === undefined || entry.md.change !== 'updated') return this.#o.applier.apply(entry);
    const type = (link.type ?? '').split(';')[0]!.trim().toLowerCase();
    if (!JSON_PATCH_TYPES.has(type)) {
      this.#o.onNote?.(`${clip(entry.loc)}: its patch is of type ${type ? `"${clip(type, 60)}"` : 'unknown'}, which is not applied; fetched whole instead.`);
      return this.#o.applier.apply(entry);
    }
    try {
      if (await this.#patch(entry, link.href)) return;
    } catch (err) {
      if (this.#o.signal?.aborted) throw err;
      this.#o.onNote?.(`${clip(entry.loc)}: the JSON Patch ${clip(link.href)} was not applied (${(err as Error).message}); fetched whole instead.`);
    }
    return this.#o.applier.apply(entry);
  }

  /** True when the change is done (patched, or nothing to do); throws a PatchFailure why it cannot be patched. */
  async #patch(entry: Entry, href: string): Promise<boolean> {
    const o = this.#o;
    const expected = expectationOf(entry.md);
    const live = o.state.get(entry.loc);
    if (live === null || live.status === 'deleted' || live.status === 'quarantined') throw new PatchFailure('the mirror holds no copy to patch');
    // Already up to date (e.g. a resumed run): the ordinary path says so without a request.
    if (recordedMatches(expected, live.length, live.digests)) return false;
    if (!isJsonType(entry.md.type ?? live.type)) throw new PatchFailure(`the resource is ${clip(entry.md.type ?? live.type ?? 'of an unknown type', 60)}, not JSON`);
    if (!promisesAnything(expected) || expected.problems.length > 0) {
      throw new PatchFailure('the change gives no usable hash or length to check the patched copy against');
    }
    if (live.length !== null && live.length > MAX_PATCHED_BYTES) throw new PatchFailure(`the local copy is over ${MAX_PATCHED_BYTES / 1048576} MiB`);
    const problem = storedPathProblem(live.path);
    if (problem !== null) throw new PatchFailure(problem);
    const file = join(o.dest, ...live.path.split('/'));
    const original = await readLocalCopy(file, live.length);
    // The patch applies to the version the mirror recorded; a local file that differs is not patched.
    const base = new FixityMeter({ hashes: live.digests, length: live.length ?? undefined, problems: [] });
    base.update(original);
    if (base.finish().status === 'mismatch') throw new PatchFailure('the local copy is not the one the mirror recorded');
    let doc: unknown;
    try {
      doc = JSON.parse(original.toString('utf8'));
    } catch {
      throw new PatchFailure('the local copy is not valid JSON');
    }

    const target = o.applier.prepare(entry);
    if (target === null) return true;
    const ops = await this.#fetchPatch(href, entry.loc);
    let result: unknown = doc;
    // What `copy` operations add: a patch of a few KiB that copies the root onto itself forty times doubles the
    // document forty times (measured: 4 GB and a crash). Values an `add` carries are bounded by the patch's size.
    let grown = 0;
    try {
      for (const [index, op] of (ops as Operation[]).entries()) {
        if (op !== null && typeof op === 'object' && op.op === 'copy' && typeof op.from === 'string') {
          // A `from` that does not exist is left to applyOperation, which says so in its own words.
          let copied: unknown = null;
          try {
            copied = jsonpatch.getValueByPointer(result, op.from);
          } catch {
            copied = null;
          }
          grown += JSON.stringify(copied ?? null).length;
          if (original.byteLength + grown > MAX_PATCHED_BYTES) {
            throw new PatchFailure(`its copy operations would make the document larger than ${MAX_PATCHED_BYTES / (1024 * 1024)} MiB`);
          }
        }
        result = applyOne(result, op, index);
      }
    } catch (err) {
      if (err instanceof PatchFailure) throw err;
      const e = err as { name?: string; message?: string };
      throw new PatchFailure(`it does not apply to the local copy: ${clip(String(e.message ?? e.name ?? err).split('\n')[0]!, 200)}`);
    }
    let fixity: FixityResult | null = null;
    let bytes: Buffer | null = null;
    for (const candidate of serializations(result, original.toString('utf8'))) {
      const meter = new FixityMeter(expected);
      meter.update(candidate);
      const judged = meter.finish();
      if (judged.status === 'verified') {
        fixity = judged;
        bytes = candidate;
        break;
      }
    }
    if (fixity === null || bytes === null) throw new PatchFailure("the patched copy does not match the change's hash and length");
    const temp = o.applier.tempPath();
    try {
      await writeFile(temp, bytes);
    } catch (err) {
      await rm(temp, { force: true });
      throw new PatchFailure(`the patched copy could not be written: ${(err as Error).message}`);
    }
    o.applier.stageFile(target, temp, fixity);
    this.patched++;
    await o.applier.settle();
    return true;
  }

  /** `home`: the resource's URI, which the patch's link may not reach further inside a network than (fetcher.ts). */
  async #fetchPatch(href: string, home: string): Promise<unknown[]> {
    const o = this.#o;
    const { signal, done } = resourceSignal(o.fetcher.deadlineMs, o.signal);
    try {
      const response = await o.fetcher.get(href, { accept: `${JSON_PATCH_TYPE}, application/json-patch, application/json;q=0.9` }, signal, home);
      if (response.status < 200 || response.status > 299) {
        response.body.destroy();
        throw new PatchFailure(`HTTP ${response.status}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_PATCH_BYTES) {
          response.body.destroy();
          throw new PatchFailure(`the patch is over ${MAX_PATCH_BYTES / 1048576} MiB`);
        }
        chunks.push(chunk as Buffer);
      }
      let ops: unknown;
      try {
        ops = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        throw new PatchFailure('the patch is not valid JSON');
      }
      if (!Array.isArray(ops)) throw new PatchFailure('the patch is not a JSON array of operations');
      return ops;
    } catch (err) {
      if (err instanceof PatchFailure || o.signal?.aborted) throw err;
      throw new PatchFailure(`the patch could not be fetched: ${(err as Error).message}`);
    } finally {
      done();
    }
  }
}
