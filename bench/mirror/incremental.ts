// The incremental benchmark's mirror and Source: a mirror whose inventory holds 1,000,000 rows (built through the real
// schema and MirrorState.put, as a finished baseline would have left it: binding, checkpoint, a completed run), and a
// Change List of 1,000 changes after its checkpoint — 900 updates of mirrored resources, 50 creations, 50 deletions
// (deletion policy `delete`). The updated and deleted resources' old copies are on disk; the other 999,050 files are
// not (nothing in an incremental run looks at them).
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalPaths } from '../../src-main/engine/mirror/local-path.ts';
import { MirrorState, STATE_DIR, STATE_FILE, stateDirOf } from '../../src-main/engine/mirror/state.ts';
import { WWW } from './data.ts';

export const INCR = { rows: 1_000_000, updated: 900, created: 50, deleted: 50 } as const;
const SIZE = 2048;
const CHECKPOINT = '2024-01-03T00:00:00Z';

const rowUri = (base: string, i: number) => `${base}/incr/r/${String(Math.floor(i / 1000)).padStart(4, '0')}/res${String(i).padStart(7, '0')}.bin`;
const newUri = (base: string, i: number) => `${base}/incr/new/res${String(i).padStart(4, '0')}.bin`;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

export interface IncrementalSetup {
  /** A folder holding `.resourcesync/state.sqlite` to copy for each run. */
  template: string;
  changeListUrl: string;
  /** URLs the run fetches (the updates and creations), for the bare-fetch reference. */
  fetched: string[];
  /** Old copies to put in each fresh mirror: relative path → bytes. */
  oldCopies: { path: string; body: Buffer }[];
  buildSeconds: number;
}

/** Picks `n` distinct row numbers spread over the inventory (deterministic). */
function spread(n: number, offset: number): number[] {
  const step = Math.floor(INCR.rows / n);
  return Array.from({ length: n }, (_, k) => k * step + offset);
}

export function buildIncremental(base: string, workDir: string): IncrementalSetup {
  const t0 = performance.now();
  const paths = new LocalPaths({ sourceUrl: `${base}/incr/changelist.xml` });
  const pathOf = (uri: string) => {
    const mapped = paths.map(uri);
    if (!mapped.ok) throw new Error(mapped.reason);
    return mapped.path;
  };
  const updated = spread(INCR.updated, 7);
  const deleted = spread(INCR.deleted, 13);
  const touched = new Set([...updated, ...deleted]);

  // Old copies of what changes (the bytes the inventory records for them).
  const oldBodies = new Map<number, Buffer>();
  for (const i of touched) oldBodies.set(i, randomBytes(SIZE));
  const filler = randomBytes(16).toString('hex');

  const template = join(workDir, 'incr-template');
  rmSync(template, { recursive: true, force: true });
  const state = new MirrorState(stateDirOf(template));
  try {
    state.setBinding({
      url: `${base}/incr/changelist.xml`,
      capabilityListUrl: null,
      resourceListUrl: `${base}/incr/resourcelist.xml`,
      changeListUrl: `${base}/incr/changelist.xml`,
      resourceDumpUrl: null,
      changeDumpUrl: null,
      maps: [],
      allowHosts: [],
      createdAt: '2024-01-03T00:00:00Z',
    });
    const run = state.startRun('baseline', 'auto', `${base}/incr/resourcelist.xml`);
    const now = '2024-01-03T00:00:02Z';
    const chunk = 20_000;
    for (let start = 0; start < INCR.rows; start += chunk) {
      state.transaction(() => {
        for (let i = start; i < Math.min(INCR.rows, start + chunk); i++) {
          const uri = rowUri(base, i);
          const old = oldBodies.get(i);
          // Rows nobody touches get a made-up (but well-formed) md5: only their presence matters.
          const digest = old ? md5(old) : `${filler}${i.toString(16).padStart(16, '0')}`;
          state.put({
            uri,
            path: pathOf(uri),
            length: SIZE,
            digests: { md5: digest },
            lastmod: '2024-01-02T03:04:05Z',
            etag: null,
            lastModified: null,
            type: null,
            status: 'verified',
            verifiedAt: now,
            runId: run.id,
          });
        }
      });
    }
    state.addToRun(run.id, { created: INCR.rows, bytes: INCR.rows * SIZE });
    state.endRun(run.id, 'completed', { fetch: 0 });
    state.setCheckpoint({ at: CHECKPOINT, from: `${base}/incr/resourcelist.xml` });
    state.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    state.close();
  }

  // The Source: new bytes for updates and creations, and the Change List.
  mkdirSync(join(WWW, 'incr', 'r'), { recursive: true });
  mkdirSync(join(WWW, 'incr', 'new'), { recursive: true });
  const lines: string[] = [];
  const fetched: string[] = [];
  let second = 0;
  const at = () => new Date(Date.parse(CHECKPOINT) + 60_000 + 1000 * second++).toISOString().replace('.000Z', 'Z');
  const serve = (uri: string) => {
    const body = randomBytes(SIZE);
    const file = join(WWW, ...new URL(uri).pathname.split('/').filter(Boolean));
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, body);
    fetched.push(uri);
    return `<rs:md change="%" datetime="${at()}" hash="md5:${md5(body)}" length="${SIZE}"/>`;
  };
  // Interleaved, as a real Change List would be.
  for (let k = 0; k < INCR.updated; k++) {
    const uri = rowUri(base, updated[k]!);
    lines.push(`<url><loc>${uri}</loc>${serve(uri).replace('%', 'updated')}</url>`);
    if (k % 18 === 0 && k / 18 < INCR.created) {
      const created = newUri(base, k / 18);
      lines.push(`<url><loc>${created}</loc>${serve(created).replace('%', 'created')}</url>`);
    }
    if (k % 18 === 9 && (k - 9) / 18 < INCR.deleted) {
      lines.push(`<url><loc>${rowUri(base, deleted[(k - 9) / 18]!)}</loc><rs:md change="deleted" datetime="${at()}"/></url>`);
    }
  }
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">\n' +
    `<rs:md capability="changelist" from="${CHECKPOINT}"/>\n${lines.join('\n')}\n</urlset>\n`;
  writeFileSync(join(WWW, 'incr', 'changelist.xml'), xml);
  const changes = lines.length;
  if (changes !== INCR.updated + INCR.created + INCR.deleted) throw new Error(`the Change List has ${changes} changes`);

  return {
    template,
    changeListUrl: `${base}/incr/changelist.xml`,
    fetched,
    oldCopies: [...oldBodies].map(([i, body]) => ({ path: pathOf(rowUri(base, i)), body })),
    buildSeconds: (performance.now() - t0) / 1000,
  };
}

/** A fresh mirror for one run: the template's state and the old copies of what changes. */
export function freshIncrementalMirror(setup: IncrementalSetup, dest: string): void {
  mkdirSync(join(dest, STATE_DIR), { recursive: true });
  copyFileSync(join(setup.template, STATE_DIR, STATE_FILE), join(dest, STATE_DIR, STATE_FILE));
  for (const { path, body } of setup.oldCopies) {
    const file = join(dest, ...path.split('/'));
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, body);
  }
}
