// Metadata resources (core spec §14.1, rs:ln rel="describedby"), fetched when asked (--with-metadata): each one is
// mirrored like any resource of the Source — mapped to its own path by its URI, downloaded through the fixity meter
// (the link's hash, length and type when it gives them), durable, in the inventory — and the `described_by` table
// says which resource it describes. So a baseline does not take it for a resource the Source no longer lists, an
// audit does not report it as extra, and it goes (by the deletion policy) when the last resource it describes goes.
// Fetched while the lists stream, from a bounded queue: memory does not grow with the number of resources.
import type { Entry } from '../documents/model.ts';
import type { Applier } from './apply.ts';
import type { MirrorState } from './state.ts';
import { canonicalEntry } from './uri.ts';

interface Wanted {
  describes: string;
  entry: Entry;
}

/** Metadata fetches waiting at most; whoever notes more waits for room. */
const QUEUE_MAX = 512;
const RELATIONS_BATCH = 256;

export class MetadataFetcher {
  /** Metadata resources handed to the applier in this run. */
  fetched = 0;
  readonly #state: MirrorState;
  readonly #applier: Applier;
  readonly #enabled: boolean;
  readonly #dryRun: boolean;
  readonly #concurrency: number;
  #queue: Wanted[] = [];
  #workers = 0;
  #idle: (() => void)[] = [];
  #room: (() => void)[] = [];
  /** The last few metadata URIs handed out, so one shared by neighbouring resources is fetched once. */
  #recent = new Set<string>();
  /** Relations not yet written: written together, one transaction per RELATIONS_BATCH (not one fsync each). */
  #relations: [string, string][] = [];

  constructor(o: { state: MirrorState; applier: Applier; enabled: boolean; concurrency: number; dryRun?: boolean }) {
    this.#state = o.state;
    this.#applier = o.applier;
    this.#enabled = o.enabled;
    this.#dryRun = o.dryRun ?? false;
    this.#concurrency = Math.max(1, o.concurrency);
  }

  /**
   * Notes the describedby links of a resource that was listed or changed; fetched in the background. Returns a
   * promise only when there is something to wait for (room in the queue), to be awaited; most entries have no link.
   */
  note(entry: Pick<Entry, 'loc' | 'links'>): Promise<void> | undefined {
    if (!this.#enabled || entry.links.length === 0) return undefined;
    return this.#note(entry);
  }

  async #note(entry: Pick<Entry, 'loc' | 'links'>): Promise<void> {
    // A metadata record the Source lists in its own right (§14.5: its own <url>, linked back with rel="describes") is
    // a resource to synchronize: recorded as describing itself, it does not go when a resource it describes goes.
    if (!this.#dryRun && entry.links.some((l) => l.rel === 'describes')) this.#relations.push([entry.loc, entry.loc]);
    for (const link of entry.links) {
      if (link.rel !== 'describedby' || !/^https?:\/\//i.test(link.href)) continue;
      const metadata: Entry = { index: 0, line: 0, loc: link.href, lastmod: link.modified, md: { hash: link.hash, length: link.length, type: link.type }, links: [] };
      // Known by the form its URI is kept in, as a listed resource is (uri.ts): the record the Resource List names in
      // its own right, spelled otherwise, is the same resource, not a second row and file.
      canonicalEntry(metadata);
      if (metadata.loc === entry.loc) continue;
      while (this.#queue.length >= QUEUE_MAX) await new Promise<void>((r) => this.#room.push(r));
      this.#queue.push({ describes: entry.loc, entry: metadata });
      while (this.#workers < this.#concurrency && this.#queue.length > 0) void this.#work();
    }
  }

  async #work(): Promise<void> {
    this.#workers++;
    try {
      for (let w = this.#queue.shift(); w !== undefined; w = this.#queue.shift()) {
        this.#room.shift()?.();
        // A dry run writes nothing, the relation included.
        if (!this.#dryRun) this.#relations.push([w.entry.loc, w.describes]);
        if (this.#relations.length >= RELATIONS_BATCH) this.#writeRelations();
        if (this.#recent.has(w.entry.loc)) continue;
        this.#recent.add(w.entry.loc);
        if (this.#recent.size > 4 * QUEUE_MAX) this.#recent.delete(this.#recent.values().next().value!);
        this.fetched++;
        await this.#applier.apply(w.entry);
      }
    } finally {
      this.#workers--;
      if (this.#workers === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /** Waits until everything noted is fetched (and its relation recorded). */
  async run(): Promise<void> {
    while (this.#workers < this.#concurrency && this.#queue.length > 0) void this.#work();
    if (this.#workers > 0) await new Promise<void>((r) => this.#idle.push(r));
    this.#writeRelations();
  }

  #writeRelations(): void {
    if (this.#relations.length === 0) return;
    const rows = this.#relations;
    this.#relations = [];
    const insert = this.#state.db.prepare('INSERT OR IGNORE INTO described_by (uri, describes) VALUES (?, ?)');
    this.#state.transaction(() => {
      for (const [uri, describes] of rows) insert.run(uri, describes);
    });
  }

  /** After `uri` was deleted: its metadata goes too (by the same policy) unless it still describes another resource. */
  deleted(uri: string): void {
    this.#writeRelations();
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
