// Checks a whole Source: from any URL, discovery finds the Source Description (or Capability Lists); then every
// document the Source links from there down is fetched once, a few at a time, streamed through the one reader,
// and checked (the reader's conformance rules plus the rules across documents in rules.ts). Resources, packages
// and notification channels are not fetched. Of each document only what the cross-document rules need is kept:
// its md and links, and the URLs of the documents it lists.
import type { DiscoveryResult } from '../../contract/types.ts';
import { discover, WELL_KNOWN_PATH } from '../discovery/discover.ts';
import { checkIndexChild } from '../documents/conformance.ts';
import { capabilityName, type DocumentHead, type DocumentSummary, type Entry, type Finding } from '../documents/model.ts';
import type { Http } from '../http/client.ts';
import { MAX_FINDINGS_PER_CODE } from '../documents/findings.ts';
import { loadDocument } from '../load.ts';
import type { CheckedDocument, CheckFinding, CheckProgress, CheckReport } from './model.ts';
import {
  absoluteUrl,
  cancelledAt,
  capabilityMismatch,
  capFindings,
  failedToLoad,
  listedAgain,
  moreListedAgain,
  stoppedAt,
  unlistedCapabilityList,
  indexEntryUntil,
  type ListedPeriod,
  upElsewhere,
  wellKnownMissing,
} from './rules.ts';

export interface CheckOptions {
  http: Http;
  signal?: AbortSignal;
  /** Most documents fetched by the walk (discovery's own requests not counted). Default 1,000. */
  maxDocuments?: number;
  /** Documents fetched at once. Default 4. */
  concurrency?: number;
  onProgress?: (progress: CheckProgress) => void;
  /** Least time between two progress calls (one more comes at the end). Default 200 ms: at most 5 a second. */
  progressIntervalMs?: number;
}

export const MAX_CHECK_DOCUMENTS = 1000;

/** Discovery's findings about the Source that no document's reading repeats: a resourcesync link (§6.3.3) to
 * something other than a Capability List. */
const DISCOVERY_FINDINGS: ReadonlySet<string> = new Set(['resourcesync-link-target']);
export const CHECK_CONCURRENCY = 4;

/** A document that lists others, as its children need it. */
interface Parent {
  url: string;
  finalUrl: string;
  summary: DocumentSummary;
  record: CheckedDocument;
  parent: Parent | null;
  /** URLs that count as the document one level up from this one's children, and its name. */
  upTargets: string[];
  upName: string;
}

interface Pending {
  url: string;
  seq: number;
  parent: Parent | null;
  /** What the parent listed it as (Capability List entry's capability, a dump's manifest, …). */
  listedAs?: string;
  /** A Change List Index's entry for it: the period the index says it covers, and the entry's line. */
  listedPeriod?: ListedPeriod;
}

interface ChildRef {
  loc: string;
  line: number;
  listedAs?: string;
  listedPeriod?: ListedPeriod;
}

export async function checkSource(startUrl: string, options: CheckOptions): Promise<CheckReport> {
  return new CheckRun(startUrl, options).run();
}

class CheckRun {
  #start: string;
  #http: Http;
  #signal?: AbortSignal;
  #max: number;
  #concurrency: number;
  #onProgress?: (progress: CheckProgress) => void;
  #interval: number;
  #finished = false;
  #lastProgress = 0;
  /** A progress call held back by the interval, sent when it is over (so the last state is never left unsaid). */
  #trailing: ReturnType<typeof setTimeout> | null = null;

  #queue: Pending[] = [];
  #next = 0;
  #seq = 0;
  #fetched = 0;
  #inFlight = new Set<string>();
  #entries = 0;
  /** Every URL reached, with who reached it first and whether a Source Description lists it. */
  #seen = new Map<string, { parent: string | null; bySourceDescription: boolean }>();
  #records: { seq: number; record: CheckedDocument }[] = [];
  #general: Finding[] = [];
  #limitHit = false;
  /** Documents listed past the document limit: never queued nor remembered, only counted. */
  #unqueued = 0;
  /** Documents whose read was cut off by a cancel. */
  #abandoned = 0;
  #cancelled = false;
  #sourceDescription: string | null = null;

  constructor(start: string, options: CheckOptions) {
    this.#start = start;
    this.#http = options.http;
    this.#signal = options.signal;
    this.#max = Math.max(1, options.maxDocuments ?? MAX_CHECK_DOCUMENTS);
    this.#concurrency = Math.max(1, options.concurrency ?? CHECK_CONCURRENCY);
    this.#onProgress = options.onProgress;
    this.#interval = options.progressIntervalMs ?? 200;
  }

  async run(): Promise<CheckReport> {
    this.#progress(true, this.#start);
    let discovered;
    try {
      discovered = await discover(this.#start, { http: this.#http, signal: this.#signal });
    } catch (error) {
      if (!this.#signal?.aborted) throw error;
      this.#cancelled = true;
      return this.#report(this.#start);
    }
    const start = discovered.start;
    this.#sourceDescription = discovered.sourceDescription;
    // What only the way in can show (the documents' own findings come again from the walk's reading).
    for (const f of discovered.findings) if (DISCOVERY_FINDINGS.has(f.code)) this.#general.push(f);
    if (discovered.sourceDescription === null && discovered.capabilityLists.length === 0) {
      const reasons = discovered.findings.filter((f) => f.severity === 'error').map((f) => f.message);
      this.#records.push({
        seq: this.#seq++,
        record: {
          url: start,
          capability: null,
          isIndex: false,
          parent: null,
          entries: 0,
          findings: [{ severity: 'error', code: 'nothing-found', message: reasons.join(' ') || `No ResourceSync Source found at ${start}` }],
        },
      });
      return this.#report(start);
    }

    if (discovered.sourceDescription !== null) this.#reach(discovered.sourceDescription, null, 'description');
    await this.#drain();
    // Capability Lists found on the way that the Source Description does not lead to are checked too.
    const more = [
      ...discovered.capabilityLists.map((list) => list.url),
      ...discovered.routes.filter((step) => step.found && step.capability === 'capabilitylist').map((step) => step.url),
    ];
    for (const url of more) if (!this.#seen.has(url)) this.#reach(url, null, 'capabilitylist');
    await this.#drain();
    if (discovered.sourceDescription !== null && !this.#stopped()) await this.#checkWellKnown(discovered.sourceDescription, discovered);
    return this.#report(start);
  }

  /** §6.3.2: the Source Description must be at /.well-known/resourcesync of its origin, wherever it was found. */
  async #checkWellKnown(sourceDescription: string, discovered: DiscoveryResult): Promise<void> {
    let wellKnown: string;
    try {
      wellKnown = new URL(WELL_KNOWN_PATH, sourceDescription).href;
    } catch {
      return;
    }
    if (absoluteUrl(sourceDescription, sourceDescription) === wellKnown) return;
    let problem: string | null;
    const tried = discovered.routes.find((step) => step.route === 'well-known' && step.url === wellKnown);
    if (tried !== undefined) {
      problem = tried.capability === 'description' ? null : tried.capability !== undefined ? `it serves a ${capabilityName(tried.capability)}` : tried.message;
    } else {
      try {
        const loaded = await loadDocument(this.#http, wellKnown, { signal: this.#signal });
        const { capability, isIndex } = loaded.summary;
        problem = capability === 'description' ? null : `it serves a ${capabilityName(capability, isIndex)}`;
      } catch (error) {
        if (this.#signal?.aborted) {
          this.#cancelled = true;
          return;
        }
        problem = failedToLoad(error).message;
      }
    }
    if (problem !== null) this.#general.push(wellKnownMissing(wellKnown, sourceDescription, problem));
  }

  // ---- the walk ------------------------------------------------------------------------------------------------

  /** Queues a document not reached before; for one that was, the parent's finding that it lists it again. */
  #reach(url: string, parent: Parent | null, listedAs: string | undefined, line?: number, listedPeriod?: ListedPeriod): Finding | null {
    const bySourceDescription = parent !== null && parent.summary.capability === 'description';
    const seen = this.#seen.get(url);
    if (seen !== undefined) {
      if (bySourceDescription) seen.bySourceDescription = true;
      return parent === null ? null : listedAgain(url, seen.parent, isAbove(url, parent), line);
    }
    if (this.#queue.length >= this.#max) {
      // Past the document limit it would never be fetched: counted, not kept (an index of a million parts cost
      // ~300 MB of queue and seen URLs), so a repeat among these is counted again rather than found.
      this.#unqueued++;
      return null;
    }
    this.#seen.set(url, { parent: parent?.url ?? null, bySourceDescription });
    const pending: Pending = { url, seq: this.#seq++, parent };
    if (listedAs !== undefined) pending.listedAs = listedAs;
    if (listedPeriod !== undefined) pending.listedPeriod = listedPeriod;
    this.#queue.push(pending);
    return null;
  }

  async #drain(): Promise<void> {
    const active = new Set<Promise<void>>();
    for (;;) {
      while (active.size < this.#concurrency && this.#next < this.#queue.length && !this.#stopped()) {
        if (this.#fetched >= this.#max) {
          this.#limitHit = true;
          break;
        }
        const item = this.#queue[this.#next++];
        this.#fetched++;
        const work: Promise<void> = this.#checkOne(item).finally(() => active.delete(work));
        active.add(work);
      }
      if (active.size === 0) return;
      await Promise.race(active);
    }
  }

  #stopped(): boolean {
    if (this.#signal?.aborted) this.#cancelled = true;
    return this.#cancelled || this.#limitHit;
  }

  async #checkOne(item: Pending): Promise<void> {
    this.#inFlight.add(item.url);
    this.#progress(false, item.url);
    let head: DocumentHead | null = null;
    const children: ChildRef[] = [];
    let overflow = 0;
    /** The document's children not reached before, kept for the walk (at most what the limit leaves room for). */
    const fresh = new Set<string>();
    const listed: ChildRef[] = [];
    const onEntry = (entry: Entry): void => {
      this.#entries++;
      if (head === null) return;
      collectChildren(head, entry, listed);
      for (const child of listed) {
        // Past the document limit, a child the walk has not reached is only counted (as #reach would), not held until
        // the document's end. A repeat is kept: it is the parent's finding. A relative one is kept too, as only the
        // document's final URL (after redirects) says what it is.
        if (ABSOLUTE.test(child.loc)) {
          const url = absoluteUrl(child.loc, item.url);
          if (!this.#seen.has(url) && !fresh.has(url)) {
            if (this.#queue.length + fresh.size >= this.#max) {
              overflow++;
              continue;
            }
            fresh.add(url);
          }
        }
        children.push(child);
      }
      listed.length = 0;
    };
    try {
      const loaded = await loadDocument(this.#http, item.url, {
        signal: this.#signal,
        onStart: (h) => {
          head = h;
        },
        onEntry,
        onProgress: () => this.#progress(false, item.url),
      });
      this.#unqueued += overflow;
      this.#checked(item, loaded.summary, loaded.finalUrl, children);
    } catch (error) {
      if (this.#signal?.aborted) {
        // Cancelled half way: not a finding about the document, which counts as not checked.
        this.#cancelled = true;
        this.#abandoned++;
        return;
      }
      this.#records.push({
        seq: item.seq,
        record: { url: item.url, capability: null, isIndex: false, parent: item.parent?.url ?? null, entries: 0, findings: [failedToLoad(error)] },
      });
    } finally {
      this.#inFlight.delete(item.url);
      this.#progress(false, null);
    }
  }

  #checked(item: Pending, summary: DocumentSummary, finalUrl: string, children: ChildRef[]): void {
    const parent = item.parent;
    const findings = [...summary.findings];
    let upMismatchFromIndex = false;
    if (parent !== null && parent.summary.isIndex) {
      // checkIndexChild names the part in its messages; the table already shows which document it is about.
      for (const f of checkIndexChild({ ...parent.summary, url: parent.url }, { ...summary, url: finalUrl })) {
        findings.push(f);
        if (f.code === 'up-link-mismatch') upMismatchFromIndex = true;
      }
      if (item.listedPeriod !== undefined) {
        const until = indexEntryUntil(summary, item.listedPeriod, parent.url);
        if (until !== null) findings.push(until);
      }
    } else if (item.listedAs !== undefined) {
      const mismatch = capabilityMismatch(summary, item.listedAs, parent?.url ?? 'discovery');
      if (mismatch !== null) findings.push(mismatch);
    }
    if (parent !== null && !upMismatchFromIndex) {
      const up = upElsewhere(summary, finalUrl, parent.upTargets, parent.upName);
      if (up !== null) findings.push(up);
    }
    const record: CheckedDocument = {
      url: item.url,
      capability: summary.capability,
      isIndex: summary.isIndex,
      parent: parent?.url ?? null,
      entries: summary.entries,
      findings: capFindings(findings),
    };
    this.#records.push({ seq: item.seq, record });
    if (finalUrl !== item.url && !this.#seen.has(finalUrl)) this.#seen.set(finalUrl, { parent: parent?.url ?? null, bySourceDescription: false });
    if (children.length === 0) return;

    // Entries are not kept: the summary (md, links, counts) is all the children's rules need.
    const kept: DocumentSummary = { ...summary, findings: [] };
    const ownLevel = summary.capability === 'description' || (summary.capability === 'capabilitylist' && !summary.isIndex);
    const node: Parent = {
      url: item.url,
      finalUrl,
      summary: kept,
      record,
      parent,
      upTargets: ownLevel ? unique([item.url, finalUrl]) : (parent?.upTargets ?? []),
      upName: summary.capability === 'description' ? 'Source Description' : ownLevel ? 'Capability List' : (parent?.upName ?? ''),
    };
    // An index may list the same part a million times: the first few repeats are shown, the rest only counted.
    const repeats = new Map<string, number>();
    for (const child of children) {
      const again = this.#reach(absoluteUrl(child.loc, finalUrl), node, child.listedAs, child.line, child.listedPeriod);
      if (again === null) continue;
      const count = (repeats.get(again.code) ?? 0) + 1;
      repeats.set(again.code, count);
      if (count <= MAX_FINDINGS_PER_CODE) record.findings.push(again);
    }
    for (const [code, count] of repeats) if (count > MAX_FINDINGS_PER_CODE) record.findings.push(moreListedAgain(code, MAX_FINDINGS_PER_CODE, count));
  }

  // ---- progress and the report ------------------------------------------------------------------------------------

  #progress(force: boolean, current: string | null): void {
    if (!this.#onProgress) return;
    const now = Date.now();
    if (!force && now - this.#lastProgress < this.#interval) {
      // Held back; but a walk that then waits (a slow document) must still show where it is.
      if (this.#trailing === null && !this.#finished) {
        this.#trailing = setTimeout(() => {
          this.#trailing = null;
          if (!this.#finished) this.#progress(true, current);
        }, this.#interval - (now - this.#lastProgress));
        this.#trailing.unref?.();
      }
      return;
    }
    if (this.#trailing !== null) clearTimeout(this.#trailing);
    this.#trailing = null;
    this.#lastProgress = now;
    this.#onProgress({
      done: this.#records.length,
      known: Math.max(this.#queue.length, this.#records.length),
      entries: this.#entries,
      current: current ?? this.#inFlight.values().next().value ?? null,
    });
  }

  #report(start: string): CheckReport {
    this.#records.sort((a, b) => a.seq - b.seq);
    const documents = this.#records.map((r) => r.record);
    for (const doc of documents) {
      if (doc.capability === 'capabilitylist' && !doc.isIndex && this.#seen.get(doc.url)?.bySourceDescription !== true) {
        doc.findings.push(unlistedCapabilityList(this.#sourceDescription));
      }
    }
    const left = this.#queue.length - this.#next + this.#abandoned + this.#unqueued;
    if (this.#unqueued > 0) this.#limitHit = true;
    if (this.#cancelled) this.#general.push(cancelledAt(documents.length, left));
    else if (this.#limitHit && left > 0) this.#general.push(stoppedAt(this.#max, left, this.#unqueued > 0));
    // Findings about the walk itself go with the first document (where the check started), or stand alone.
    if (documents.length > 0) documents[0].findings.push(...this.#general);
    const findings: CheckFinding[] = [];
    for (const doc of documents) for (const f of doc.findings) findings.push({ document: doc.url, ...f });
    if (documents.length === 0) for (const f of this.#general) findings.push({ document: start, ...f });
    const errors = findings.filter((f) => f.severity === 'error').length;
    const report: CheckReport = {
      start,
      sourceDescription: this.#sourceDescription,
      documents,
      findings,
      summary: {
        documents: documents.length,
        entries: documents.reduce((sum, doc) => sum + doc.entries, 0),
        errors,
        warnings: findings.length - errors,
        truncated: this.#cancelled || (this.#limitHit && left > 0),
        cancelled: this.#cancelled,
      },
    };
    this.#progress(true, null);
    this.#finished = true;
    return report;
  }
}

/** What of an entry the walk follows: Capability Lists of a Source Description, capabilities of a Capability
 * List (not notification channels), the parts of an index, and the manifests of a dump's packages. */
function collectChildren(head: DocumentHead, entry: Entry, into: ChildRef[]): void {
  const { capability, isIndex } = head;
  if (isIndex) {
    const ref: ChildRef = { loc: entry.loc, line: entry.line, listedAs: capability };
    if (capability === 'changelist') ref.listedPeriod = { until: entry.md.until, line: entry.line };
    into.push(ref);
  } else if (capability === 'description') {
    const listed = entry.md.capability;
    // Entries of another kind are the reader's finding (description-entry); they are not followed.
    if (listed === undefined || listed === 'capabilitylist') into.push({ loc: entry.loc, line: entry.line, listedAs: 'capabilitylist' });
  } else if (capability === 'capabilitylist') {
    const listed = entry.md.capability;
    if (listed !== undefined && listed !== 'change-notification' && listed !== 'description') {
      into.push({ loc: entry.loc, line: entry.line, listedAs: listed });
    }
  } else if (capability === 'resourcedump' || capability === 'changedump') {
    for (const link of entry.links) {
      if (link.rel === 'contents' && link.href !== '') into.push({ loc: link.href, line: entry.line, listedAs: `${capability}-manifest` });
    }
  }
}

/** A URL with a scheme (a loc resolves to itself whatever the document's URL). */
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:/i;

function isAbove(url: string, parent: Parent): boolean {
  for (let p: Parent | null = parent; p !== null; p = p.parent) if (p.url === url || p.finalUrl === url) return true;
  return false;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
