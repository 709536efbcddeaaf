// Reads a Change List or Change List Index (core spec §12) and hands over, through a ChangeTimeline, every change at
// or after `since`: closed lists that end before it are not read, the lists of an index in chronological order (by
// `from`; in the index's own order when some list has none, it is only recommended, §12.2). Used by an incremental
// sync and by an audit, which must read the same changes the same way.
import { clip } from '../clip.ts';
import { parseW3cDatetime, w3cPeriodEnd } from '../documents/datetime.ts';
import type { DocumentSummary } from '../documents/model.ts';
import type { Http } from '../http/client.ts';
import { loadDocument } from '../load.ts';
import { ChangeTimeline, type Timed } from './change-timeline.ts';
import { listKey } from './entries.ts';

export interface ChangeListsRead {
  top: DocumentSummary;
  /** Where the lists begin: the top document's `from`, else (an index without one) its earliest list's; null if none. */
  begins: { value: string; ms: number } | null;
  /** The latest `until` of the closed lists read (the mirror is in step up to it when every change was applied). */
  closedUntil: number | null;
}

export interface ReadChangeListsOptions {
  since: number;
  /** Only lists that begin up to this instant (filling one missing interval). */
  untilMs?: number;
  signal?: AbortSignal;
  /** Each change at or after `since`, with the document it came from. */
  onChange: (change: Timed, documentUrl: string) => void;
  onNote?: (note: string) => void;
}

const msOf = (value: string | undefined) => (value ? parseW3cDatetime(value) : null);
/** An `until` is judged by the end of the period it names ("2020-01-05": the whole day). */
const endOf = (value: string | undefined) => (value ? w3cPeriodEnd(value) : null);

export async function readChangeLists(http: Http, url: string, o: ReadChangeListsOptions): Promise<ChangeListsRead> {
  let documentUrl = url;
  const timeline = new ChangeTimeline(o.since, (change) => o.onChange(change, documentUrl));
  const children: { url: string; from: number | null; fromText?: string; until: number | null; untilEnd: number | null; seq: number }[] = [];
  let isIndex = false;
  const top = await loadDocument(http, url, {
    signal: o.signal,
    onStart: (head) => {
      isIndex = head.isIndex;
      if (!isIndex) timeline.begin(msOf(head.md.from), endOf(head.md.until));
    },
    onEntry: (entry) => {
      if (!isIndex) return timeline.push(entry);
      const { from, until } = entry.md;
      children.push({ url: entry.loc, from: msOf(from), fromText: from, until: msOf(until), untilEnd: endOf(until), seq: children.length });
    },
  });
  timeline.end();
  if (top.summary.capability !== 'changelist') throw new Error(`${clip(url)} is a ${top.summary.capability}, not a Change List`);
  let closedUntil = top.summary.isIndex ? null : msOf(top.summary.md.until);
  if (top.summary.isIndex) {
    const byFrom = children.every((c) => c.from !== null);
    const wanted = children
      .filter((c) => (c.untilEnd === null || c.untilEnd >= o.since) && (o.untilMs === undefined || c.from === null || c.from <= o.untilMs))
      .sort((a, b) => (byFrom ? a.from! - b.from! : 0) || a.seq - b.seq);
    if (wanted.length < children.length) o.onNote?.(`${children.length - wanted.length} closed Change Lists end before the checkpoint; not read.`);
    // Each list once: an index that repeats a list (or lists itself) is not read again for every entry that names it
    // (a sloppy or hostile index of 100,000 entries naming one list would have it downloaded 100,000 times).
    const read = new Set([listKey(url), listKey(top.finalUrl)]);
    let repeated = 0;
    for (const child of wanted) {
      const key = listKey(child.url);
      if (read.has(key)) {
        repeated++;
        continue;
      }
      read.add(key);
      documentUrl = child.url;
      const doc = await loadDocument(http, child.url, {
        signal: o.signal,
        onStart: (head) => timeline.begin(child.from ?? msOf(head.md.from), child.untilEnd ?? endOf(head.md.until)),
        onEntry: (entry) => timeline.push(entry),
      });
      timeline.end();
      if (doc.summary.capability !== 'changelist' || doc.summary.isIndex) {
        throw new Error(`${clip(child.url)}, listed in the Change List Index, is not a Change List`);
      }
      const until = child.until ?? msOf(doc.summary.md.until);
      if (until !== null && (closedUntil === null || until > closedUntil)) closedUntil = until;
    }
    if (repeated > 0) o.onNote?.(`The Change List Index names a list it names before, or itself, ${repeated} time${repeated === 1 ? '' : 's'}; each list is read once.`);
  }
  let begins: ChangeListsRead['begins'] = null;
  const topFrom = msOf(top.summary.md.from);
  if (topFrom !== null) begins = { value: top.summary.md.from!, ms: topFrom };
  else {
    for (const child of children) if (child.from !== null && (begins === null || child.from < begins.ms)) begins = { value: child.fromText!, ms: child.from };
  }
  return { top: top.summary, begins, closedUntil };
}
