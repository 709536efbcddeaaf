// Metadata resources (core spec §14.1, rs:ln rel="describedby"), fetched when asked (--with-metadata): each one is
// mirrored like any resource of the Source — mapped to its own path by its URI, downloaded through the fixity meter
// (the link's hash, length and type when it gives them), durable, in the inventory — and the `described_by` table
// says which resource it describes. So a baseline does not take it for a resource the Source no longer lists, an
// audit does not report it as extra, and it goes (by the deletion policy) when the last resource it describes goes.
import type { Entry } from '../documents/model.ts';
import type { Applier } from './apply.ts';
import type { MirrorState } from './state.ts';

interface Wanted {
  href: string;
  describes: string;
  entry: Entry;
}

export class MetadataFetcher {
  /** Metadata resources handed to the applier in this run. */
  fetched = 0;
  readonly #state: MirrorState;
  readonly #applier: Applier;
  readonly #enabled: boolean;
  readonly #dryRun: boolean;
  readonly #concurrency: number;
  readonly #queued = new Set<string>();
  #wanted: Wanted[] = [];

  constructor(o: { state: MirrorState; applier: Applier; enabled: boolean; concurrency: number; dryRun?: boolean }) {
    this.#state = o.state;
    this.#applier = o.applier;
    this.#enabled = o.enabled;
    this.#dryRun = o.dryRun ?? false;
    this.#concurrency = Math.max(1, o.concurrency);
  }

  /** Notes the describedby links of a resource that was listed or changed (fetched later, by `run`). */
  note(entry: Pick<Entry, 'loc' | 'links'>): void {
    if (!this.#enabled) return;
    for (const link of entry.links) {
      if (link.rel !== 'describedby' || !/^https?:\/\//i.test(link.href) || link.href === entry.loc) continue;
      const key = `${link.href}\n${entry.loc}`;
      if (this.#queued.has(key)) continue;
      this.#queued.add(key);
      this.#wanted.push({
        href: link.href,
        describes: entry.loc,
        entry: { index: 0, line: 0, loc: link.href, lastmod: link.modified, md: { hash: link.hash, length: link.length, type: link.type }, links: [] },
      });
    }
  }

  /** Fetches what was noted: each metadata URI once, `concurrency` at a time. */
  async run(): Promise<void> {
    const wanted = this.#wanted;
    this.#wanted = [];
    const insert = this.#state.db.prepare('INSERT OR IGNORE INTO described_by (uri, describes) VALUES (?, ?)');
    const once = new Map<string, Entry>();
    for (const w of wanted) {
      // A dry run writes nothing, the relation included.
      if (!this.#dryRun) insert.run(w.href, w.describes);
      if (!once.has(w.href)) once.set(w.href, w.entry);
    }
    const queue = [...once.values()];
    const worker = async () => {
      for (let e = queue.shift(); e !== undefined; e = queue.shift()) {
        this.fetched++;
        await this.#applier.apply(e);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, queue.length) }, worker));
  }

  /** After `uri` was deleted: its metadata goes too (by the same policy) unless it still describes another resource. */
  deleted(uri: string): void {
    const db = this.#state.db;
    const rows = db.prepare('SELECT uri FROM described_by WHERE describes = ?').all(uri) as { uri: string }[];
    if (rows.length === 0) return;
    const others = db.prepare('SELECT 1 FROM described_by WHERE uri = ? AND describes != ? LIMIT 1');
    const orphans = rows.filter(({ uri: meta }) => others.get(meta, uri) === undefined).map((r) => r.uri);
    if (!this.#dryRun) db.prepare('DELETE FROM described_by WHERE describes = ?').run(uri);
    for (const meta of orphans) this.#applier.delete(meta);
  }
}

/** URIs of the inventory that are metadata of a resource, with the resources they describe. */
export function metadataOf(state: MirrorState): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const row of state.db.prepare('SELECT uri, describes FROM described_by').iterate() as Iterable<{ uri: string; describes: string }>) {
    const list = out.get(row.uri);
    if (list) list.push(row.describes);
    else out.set(row.uri, [row.describes]);
  }
  return out;
}

/** Whether a URI the Source does not list should stay: metadata of a resource that is still listed (or kept). */
export function keepAsMetadata(metadata: Map<string, string[]>, uri: string, listed: (resource: string) => boolean): boolean {
  const describes = metadata.get(uri);
  return describes !== undefined && describes.some(listed);
}
