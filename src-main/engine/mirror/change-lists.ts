// Reads a Change List or Change List Index (core spec §12) and hands over, through a ChangeTimeline, every change at
// or after `since`: closed lists that end before it are not read, the lists of an index in chronological order (by
// `from`; in the index's own order when some list has none, it is only recommended, §12.2). Used by an incremental
// sync and by an audit, which must read the same changes the same way.
import { clip } from '../clip.ts';
import { parseW3cDatetime, w3cPeriodEnd } from '../documents/datetime.ts';
import type { DocumentSummary, Finding } from '../documents/model.ts';
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
  /**
   * The earliest `from` of a list the index names that was not read (it redirects back to the index, or to a list
   * read before): its changes may be missing, so the checkpoint must not pass it. -Infinity: such a list gives no
   * `from` (the checkpoint stays); null: every list named was read.
   */
  unreadFrom: number | null;
}

export interface ReadChangeListsOptions {
  since: number;
  /** Only lists that begin up to this instant (filling one missing interval). */
  untilMs?: number;
  signal?: AbortSignal;
  /** Each change at or after `since`, with the document it came from. */
  onChange: (change: Timed, documentUrl: string) => void;
  onNote?: (note: string) => void;
  /** What the reader found against the spec in each document read (the index and each list). */
  onFindings?: (documentUrl: string, findings: Finding[]) => void;
  /**
   * Notes of lists not read that may hold changes (a loop; a closed list whose index cannot be read); default
   * `onNote`. An audit takes these alone: the others (closed lists before `since`, a list named twice) hide nothing.
   */
  onUnread?: (note: string) => void;
  /**
   * What a list skipped as a loop means to the caller, ending its note (`one`: one list was skipped). Default: a
   * sync's, whose checkpoint stays before it.
   */
  loopMeans?: (one: boolean) => string;
}

/** A list an index names, with the times its entry gives; `seq`: its place in the index. */
type Child = { url: string; from: number | null; fromText?: string; until: number | null; untilEnd: number | null; seq: number };

/** A list that led back to the index or to a list read before (see readChangeLists). */
class LoopedList extends Error {}

const syncLoopMeans = (one: boolean) => `so the checkpoint stays before ${one ? 'its' : 'their'} period and the next sync asks again.`;

const msOf = (value: string | undefined) => (value ? parseW3cDatetime(value) : null);
/** An `until` is judged by the end of the period it names ("2020-01-05": the whole day). */
const endOf = (value: string | undefined) => (value ? w3cPeriodEnd(value) : null);

export async function readChangeLists(http: Http, url: string, o: ReadChangeListsOptions): Promise<ChangeListsRead> {
  let documentUrl = url;
  const timeline = new ChangeTimeline(o.since, (change) => o.onChange(change, documentUrl));
  const children: Child[] = [];
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
  o.onFindings?.(url, top.summary.findings);
  let closedUntil = top.summary.isIndex ? null : msOf(top.summary.md.until);
  // Each list once: an index that repeats a list (or lists itself) is not read again for every entry that names it
  // (a sloppy or hostile index of 100,000 entries naming one list would have it downloaded 100,000 times).
  const read = new Set([listKey(url), listKey(top.finalUrl)]);
  let wanted: Child[] = [];
  if (top.summary.isIndex) {
    const byFrom = children.every((c) => c.from !== null);
    wanted = children
      .filter((c) => (c.untilEnd === null || c.untilEnd >= o.since) && (o.untilMs === undefined || c.from === null || c.from <= o.untilMs))
      .sort((a, b) => (byFrom ? a.from! - b.from! : 0) || a.seq - b.seq);
    if (wanted.length < children.length) o.onNote?.(`${children.length - wanted.length} closed Change Lists end before the checkpoint; not read.`);
  } else if (closedUntil !== null && (o.untilMs === undefined || closedUntil < o.untilMs)) {
    // A closed list is never updated again: the changes after its `until` are in the lists its Change List Index names
    // (§12.1). Without reading them a mirror whose Capability List (or own URL) still names the closed list would stay
    // at its `until` for ever, every run "in step".
    wanted = await continuations(http, top.summary, closedUntil, o);
  }
  let unreadFrom: number | null = null;
  if (wanted.length > 0) {
    let repeated = 0;
    const loops: string[] = [];
    for (const child of wanted) {
      const key = listKey(child.url);
      if (read.has(key)) {
        repeated++;
        continue;
      }
      read.add(key);
      documentUrl = child.url;
      let landed = child.url;
      let looped = false;
      const doc = await loadDocument(http, child.url, {
        signal: o.signal,
        onResponse: (finalUrl) => void (landed = finalUrl),
        onStart: (head) => {
          // A list that redirects back to the index, or to a list read before, is a loop: read as this list, the
          // index stopped the whole run ("… is not a Change List") and a list read before gave its changes again
          // under another list's period. Skipped, said, and the checkpoint kept before what it should have listed.
          if (listKey(landed) !== key && read.has(listKey(landed))) {
            looped = true;
            throw new LoopedList();
          }
          timeline.begin(child.from ?? msOf(head.md.from), child.untilEnd ?? endOf(head.md.until));
        },
        onEntry: (entry) => timeline.push(entry),
      }).catch((err: unknown) => {
        if (looped && !o.signal?.aborted) return null;
        throw err;
      });
      if (doc === null) {
        loops.push(child.url);
        const from = child.from ?? -Infinity;
        if (unreadFrom === null || from < unreadFrom) unreadFrom = from;
        continue;
      }
      read.add(listKey(landed));
      timeline.end();
      if (doc.summary.capability !== 'changelist' || doc.summary.isIndex) {
        throw new Error(`${clip(child.url)}, listed in the Change List Index, is not a Change List`);
      }
      o.onFindings?.(child.url, doc.summary.findings);
      const until = child.until ?? msOf(doc.summary.md.until);
      if (until !== null && (closedUntil === null || until > closedUntil)) closedUntil = until;
    }
    if (repeated > 0 && top.summary.isIndex) o.onNote?.(`The Change List Index names a list it names before, or itself, ${repeated} time${repeated === 1 ? '' : 's'}; each list is read once.`);
    if (loops.length > 0) {
      const one = loops.length === 1;
      (o.onUnread ?? o.onNote)?.(
        `${one ? 'The Change List' : `${loops.length} Change Lists`} ${clip(loops[0]!)}${one ? '' : ' (the first)'}, named by ${top.summary.isIndex ? `the Change List Index ${clip(url)}` : `the Change List Index the closed list ${clip(url)} links to`}, ` +
          `redirect${one ? 's' : ''} back to the index or to a list already read, and ${one ? 'was' : 'were'} not read: the changes ${one ? 'it lists' : 'they list'} may be missing, ` +
          (o.loopMeans ?? syncLoopMeans)(one),
      );
    }
  }
  let begins: ChangeListsRead['begins'] = null;
  const topFrom = msOf(top.summary.md.from);
  if (topFrom !== null) begins = { value: top.summary.md.from!, ms: topFrom };
  else {
    for (const child of children) if (child.from !== null && (begins === null || child.from < begins.ms)) begins = { value: child.fromText!, ms: child.from };
  }
  return { top: top.summary, begins, closedUntil, unreadFrom };
}

/**
 * The Change Lists that continue the closed list `closed`: those its `index` link's Change List Index names from the
 * closed list's `until` on, in chronological order (by `from`; in the index's order after the closed list when some
 * list gives none). None when it links to no index, or when the index cannot be read (said so): the run goes on with
 * what it read.
 */
async function continuations(http: Http, closed: DocumentSummary, until: number, o: ReadChangeListsOptions) {
  const href = closed.links.find((l) => l.rel.split(/\s+/).includes('index'))?.href;
  // Without one, the Capability List read again at the next run names the list that continues it (sync.ts).
  if (href === undefined) return [];
  const at = new Date(until).toISOString();
  const children: Child[] = [];
  try {
    const index = await loadDocument(http, href, {
      signal: o.signal,
      onEntry: (entry) => {
        const { from, until: to } = entry.md;
        children.push({ url: entry.loc, from: msOf(from), fromText: from, until: msOf(to), untilEnd: endOf(to), seq: children.length });
      },
    });
    if (index.summary.capability !== 'changelist' || !index.summary.isIndex) throw new Error(`it is a ${index.summary.capability}${index.summary.isIndex ? ' index' : ''}, not a Change List Index`);
    o.onFindings?.(href, index.summary.findings);
  } catch (err) {
    if (o.signal?.aborted) throw err;
    (o.onUnread ?? o.onNote)?.(`The Change List ${clip(closed.url)} is closed (until ${at}); its Change List Index ${clip(href)}, where the changes after that are listed, could not be read (${clip(err instanceof Error ? err.message : String(err), 200)}).`);
    return [];
  }
  const self = listKey(closed.url);
  const position = children.findIndex((c) => listKey(c.url) === self);
  const next = children.every((c) => c.from !== null)
    ? children.filter((c) => c.from! >= until && listKey(c.url) !== self).sort((a, b) => a.from! - b.from! || a.seq - b.seq)
    : position === -1
      ? []
      : children.slice(position + 1);
  return next.filter((c) => (c.untilEnd === null || c.untilEnd >= o.since) && (o.untilMs === undefined || c.from === null || c.from <= o.untilMs));
}
