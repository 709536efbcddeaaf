// Documents as the UI sees them: fetched once into the cache (entries streamed straight into SQLite), then
// summaries, pages of entries, single entries and the raw head are all answered from the cache.
import type { ChildRef, DocumentView, EntryPage, RawDocument } from '../contract/types.ts';
import { checkIndexChild } from '../engine/documents/conformance.ts';
import type { Entry, Finding } from '../engine/documents/model.ts';
import { DocumentError } from '../engine/documents/errors.ts';
import { NetworkError } from '../engine/http/errors.ts';
import { HEAD_BYTES, loadDocument } from '../engine/load.ts';
import type { CachedDocument, EntryQuery, Store } from '../store/store.ts';
import { NotFoundError } from './errors.ts';
import type { EventHub } from './events.ts';
import type { HttpHolder } from './http-holder.ts';

/** Change documents carry `from`/`until`; without `until` they are still growing (core spec §12, §13). */
const CHANGE_CAPABILITIES = new Set(['changelist', 'changedump', 'changedump-manifest']);
/** Documents whose entries are other ResourceSync documents: the tree shows them as children. */
const PARENT_CAPABILITIES = new Set(['description', 'capabilitylist']);
/** At most this often a `document.progress` event per load, plus one at the end. */
export const PROGRESS_INTERVAL_MS = 200;
/**
 * How long a refused document is not fetched again: a retry (a click, a refresh) within this time answers with
 * the remembered refusal at once instead of downloading up to 50 MB again to be refused again.
 */
export const REFUSAL_MEMORY_MS = 10 * 60_000;
const MAX_REMEMBERED_REFUSALS = 1_000;

/** Refusals worth remembering: the document itself is the problem, not a passing network failure. */
function isRefusal(error: unknown): error is DocumentError | NetworkError {
  if (error instanceof DocumentError) return error.code !== 'aborted' && error.code !== 'io';
  return error instanceof NetworkError && (error.code === 'too-large' || error.code === 'deadline');
}

/** The remembered refusal, saying so and when the document will be fetched again. */
function remembered(error: DocumentError | NetworkError, at: number, now: number): Error {
  const ago = Math.max(0, Math.round((now - at) / 60_000));
  const left = Math.max(1, Math.ceil((at + REFUSAL_MEMORY_MS - now) / 60_000));
  const note =
    ` (refused ${ago === 0 ? 'less than a minute' : `${ago} min`} ago and not fetched again; ` +
    `it can be retried in ${left} min)`;
  if (error instanceof DocumentError) {
    return new DocumentError(error.code, error.message + note, error.line === undefined ? undefined : { line: error.line });
  }
  return new NetworkError(error.code, error.message + note, error.url);
}

export function childrenOf(cached: CachedDocument, entries: Iterable<Entry>): ChildRef[] {
  const { summary } = cached;
  if (!summary.isIndex && !PARENT_CAPABILITIES.has(summary.capability)) return [];
  const children: ChildRef[] = [];
  for (const entry of entries) {
    const child: ChildRef = { url: entry.loc, md: entry.md, links: entry.links };
    // The parts of an index are of the index's own kind unless they say otherwise.
    const capability = entry.md.capability ?? (summary.isIndex ? summary.capability : undefined);
    if (capability !== undefined) child.capability = capability;
    const hub = entry.links.find((link) => link.rel === 'hub')?.href;
    if (hub !== undefined) child.hub = hub;
    children.push(child);
  }
  return children;
}

export function viewOf(cached: CachedDocument, entries: Iterable<Entry>): DocumentView {
  const { summary } = cached;
  return {
    ...summary,
    fetchedAt: cached.fetchedAt,
    bytes: cached.bytes,
    open: CHANGE_CAPABILITIES.has(summary.capability) ? summary.md.until === undefined : null,
    children: childrenOf(cached, entries),
  };
}

export class DocumentService {
  #store: Store;
  #http: HttpHolder;
  #events: EventHub;
  #loads = new Map<string, Promise<CachedDocument>>();
  #abort = new AbortController();
  #refusals = new Map<string, { error: DocumentError | NetworkError; at: number }>();
  #now: () => number;

  constructor(deps: { store: Store; http: HttpHolder; events: EventHub; now?: () => number }) {
    this.#store = deps.store;
    this.#http = deps.http;
    this.#events = deps.events;
    this.#now = deps.now ?? Date.now;
  }

  /** Fetches url into the cache. Concurrent calls for one URL share one load; a recent refusal is answered at once. */
  load(url: string): Promise<CachedDocument> {
    const running = this.#loads.get(url);
    if (running) return running;
    const refusal = this.#refusals.get(url);
    if (refusal !== undefined) {
      const now = this.#now();
      if (now - refusal.at < REFUSAL_MEMORY_MS) return Promise.reject(remembered(refusal.error, refusal.at, now));
      this.#refusals.delete(url);
    }
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
        this.#store.documents.setIndexParts(url, childrenOf(cached, this.#store.documents.iterate(url)).map((c) => c.url));
      }
      this.#events.emit('document.progress', { url, bytes: loaded.bytes, entries: loaded.summary.entries });
      return cached;
    } catch (error) {
      writer.abort();
      if (isRefusal(error)) this.#remember(url, error);
      throw error;
    }
  }

  #remember(url: string, error: DocumentError | NetworkError): void {
    const now = this.#now();
    for (const [known, { at }] of this.#refusals) if (now - at >= REFUSAL_MEMORY_MS) this.#refusals.delete(known);
    // A bounded memory: the oldest is forgotten first (a Map keeps insertion order).
    if (this.#refusals.size >= MAX_REMEMBERED_REFUSALS) this.#refusals.delete(this.#refusals.keys().next().value as string);
    this.#refusals.set(url, { error, at: now });
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
    // Only when the copy was replaced by nothing in between (a cache clear): report it plainly.
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
