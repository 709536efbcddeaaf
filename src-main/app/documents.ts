// Documents as the UI sees them: fetched once into the cache (entries streamed straight into SQLite), then
// summaries, pages of entries, single entries and the raw head are all answered from the cache.
import { childOf } from '../contract/children.ts';
import type { ChildRef, DocumentView, EntryPage, RawDocument } from '../contract/types.ts';
import { checkIndexChild } from '../engine/documents/conformance.ts';
import type { Entry, Finding } from '../engine/documents/model.ts';
import { RefusalMemory } from '../engine/refusals.ts';
import { HEAD_BYTES, loadDocument } from '../engine/load.ts';
import type { CachedDocument, EntryQuery, Store } from '../store/store.ts';
import { NotFoundError } from './errors.ts';
import type { EventHub } from './events.ts';
import type { HttpHolder } from './http-holder.ts';

/** Change documents carry `from`/`until`; without `until` they are still growing (core spec §12, §13). */
const CHANGE_CAPABILITIES = new Set(['changelist', 'changedump', 'changedump-manifest']);
/** Documents whose entries are other ResourceSync documents: the tree shows them as children. */
const PARENT_CAPABILITIES = new Set(['description', 'capabilitylist']);
/** A dump's packages each name their Manifest with a `contents` link (core spec §11.2, §14.2). */
const MANIFEST_OF: Readonly<Record<string, string>> = {
  resourcedump: 'resourcedump-manifest',
  changedump: 'changedump-manifest',
};
/** At most this often a `document.progress` event per load, plus one at the end. */
export const PROGRESS_INTERVAL_MS = 200;
export { REFUSAL_MEMORY_MS } from '../engine/refusals.ts';

/**
 * Children a document's view carries at most. An index may name a million parts (35 MB): as one view they were some
 * 300 MB in the main process and took seconds to hand to the window each time it was asked for. The rest are
 * counted (`childrenLeftOut`); the entries table shows every entry, and the tree reads the rest of an index's or
 * a list's children page by page (documents.entries).
 */
export const MAX_VIEW_CHILDREN = 10_000;

/** The children, the first `limit` of them, and how many more there are. */
export function childrenOf(cached: CachedDocument, entries: Iterable<Entry>, limit: number): { children: ChildRef[]; leftOut: number } {
  const { summary } = cached;
  const manifest = summary.isIndex ? undefined : MANIFEST_OF[summary.capability];
  if (manifest !== undefined) return manifestsOf(manifest, entries, limit);
  if (!summary.isIndex && !PARENT_CAPABILITIES.has(summary.capability)) return { children: [], leftOut: 0 };
  const children: ChildRef[] = [];
  for (const entry of entries) {
    if (children.length >= limit) break;
    children.push(childOf(entry, summary));
  }
  // Every entry is a child: the rest need not be read to be counted.
  return { children, leftOut: Math.max(0, summary.entries - children.length) };
}

/** One child per distinct `contents` link of the dump's packages, in document order. */
function manifestsOf(capability: string, entries: Iterable<Entry>, limit: number): { children: ChildRef[]; leftOut: number } {
  const children: ChildRef[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    for (const link of entry.links) {
      if (link.rel !== 'contents' || seen.has(link.href)) continue;
      seen.add(link.href);
      if (children.length < limit) children.push({ url: link.href, capability, md: { capability }, links: [link], package: entry.loc });
    }
  }
  return { children, leftOut: seen.size - children.length };
}

export function viewOf(cached: CachedDocument, entries: Iterable<Entry>): DocumentView {
  const { summary } = cached;
  const { children, leftOut } = childrenOf(cached, entries, MAX_VIEW_CHILDREN);
  const view: DocumentView = {
    ...summary,
    fetchedAt: cached.fetchedAt,
    bytes: cached.bytes,
    open: CHANGE_CAPABILITIES.has(summary.capability) ? summary.md.until === undefined : null,
    children,
    shape: cached.shape,
  };
  if (leftOut > 0) view.childrenLeftOut = leftOut;
  return view;
}

export class DocumentService {
  #store: Store;
  #http: HttpHolder;
  #events: EventHub;
  #loads = new Map<string, Promise<CachedDocument>>();
  #abort = new AbortController();
  #refusals: RefusalMemory;

  /** `refusals`: shared with discovery, so a document refused there is not downloaded again here (nor back). */
  constructor(deps: { store: Store; http: HttpHolder; events: EventHub; refusals?: RefusalMemory }) {
    this.#store = deps.store;
    this.#http = deps.http;
    this.#events = deps.events;
    this.#refusals = deps.refusals ?? new RefusalMemory();
  }

  /** Fetches url into the cache. Concurrent calls for one URL share one load; a recent refusal is answered at once. */
  load(url: string): Promise<CachedDocument> {
    const running = this.#loads.get(url);
    if (running) return running;
    const refused = this.#refusals.recallError(url);
    if (refused !== null) return Promise.reject(refused);
    const load = this.#load(url).finally(() => this.#loads.delete(url));
    this.#loads.set(url, load);
    return load;
  }

  async #load(url: string): Promise<CachedDocument> {
    const writer = this.#store.documents.begin(url);
    let lastProgress = 0;
    try {
      const loaded = await this.#http.use((http) =>
        loadDocument(http, url, {
          signal: this.#abort.signal,
          onEntry: (entry) => writer.add(entry),
          onProgress: ({ bytes, entries }) => {
            const now = Date.now();
            if (now - lastProgress < PROGRESS_INTERVAL_MS) return;
            lastProgress = now;
            this.#events.emit('document.progress', { url, bytes, entries });
          },
        }),
      );
      const cached = writer.commit({
        fetchedAt: new Date().toISOString(),
        summary: loaded.summary,
        bytes: loaded.bytes,
        contentType: loaded.contentType,
        head: loaded.head,
      });
      if (loaded.summary.isIndex) {
        this.#store.documents.setIndexParts(url, Array.from(this.#store.documents.iterate(url), (entry) => entry.loc));
      }
      this.#events.emit('document.progress', { url, bytes: loaded.bytes, entries: loaded.summary.entries });
      return cached;
    } catch (error) {
      writer.abort();
      this.#refusals.remember(url, error);
      throw error;
    }
  }

  /** The cached copy, fetching it first when there is none. */
  async ensure(url: string): Promise<CachedDocument> {
    return this.#store.documents.get(url) ?? (await this.load(url));
  }

  async summary(url: string, refresh: boolean): Promise<DocumentView> {
    const cached = refresh ? await this.load(url) : await this.ensure(url);
    const view = viewOf(cached, this.#store.documents.iterate(url));
    const crossFindings = this.#indexFindings(cached);
    return crossFindings.length === 0 ? view : { ...view, findings: [...view.findings, ...crossFindings] };
  }

  /** Rules between a document and each cached index that lists it (only known once both were fetched). */
  #indexFindings(cached: CachedDocument): Finding[] {
    const findings: Finding[] = [];
    for (const indexUrl of this.#store.documents.indexesOf(cached.url)) {
      const index = this.#store.documents.get(indexUrl);
      if (index) findings.push(...checkIndexChild(index.summary, { ...cached.summary, url: cached.url }));
    }
    return findings;
  }

  async entries(url: string, query: EntryQuery): Promise<EntryPage> {
    await this.ensure(url);
    const page = this.#store.documents.query(url, query);
    // Only when the copy was dropped in between (a cache clear, or the cache's bound making room for a document
    // larger than it, store/documents.ts): report it plainly; opening it again fetches it.
    if (page === null) throw new NotFoundError(`${url} is not in the cache`);
    return page;
  }

  async entry(url: string, index: number): Promise<Entry> {
    const cached = await this.ensure(url);
    const entry = this.#store.documents.entry(url, index);
    if (!entry) {
      throw new NotFoundError(`${url} has no entry at position ${index} (it has ${cached.summary.entries} entries)`);
    }
    return entry;
  }

  async raw(url: string, limit?: number): Promise<RawDocument> {
    const cached = await this.ensure(url);
    const head = cached.head;
    const text = limit !== undefined && limit < head.length ? head.slice(0, limit) : head;
    // The cache holds only the first HEAD_BYTES of a document.
    return { text, truncated: text.length < head.length || cached.bytes > HEAD_BYTES, bytes: cached.bytes };
  }

  /** Cancels running loads and waits until they have let go of the store. */
  async close(): Promise<void> {
    this.#abort.abort();
    await Promise.allSettled([...this.#loads.values()]);
  }
}
