// A Resource List read as the mirror reads one, for a sync's baseline and for the audit alike: a Resource List Index's
// parts each once, however often (and however spelled) the index names them; a sloppy Source's index written as a
// <urlset>, whose entries describe themselves as Resource Lists, read as one; an entry carrying only the `at` or
// `completed` that lists carry read as a part if it turns out to be one, else taken as a resource. The two had
// their own copies of this, and an audit that read a Source otherwise than its syncs could never find it in sync.
import { clip } from '../clip.ts';
import { DocumentError } from '../documents/errors.ts';
import type { Entry, Finding } from '../documents/model.ts';
import type { Http } from '../http/client.ts';
import { loadDocument, type LoadedDocument } from '../load.ts';
import { listKey } from './entries.ts';

/** A part of an index that turned out, after redirects, to be the index itself. */
class IsTheIndex extends Error {}

/** A document read as a Resource List (or one of its parts) that is something else. */
export class NotAResourceList extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotAResourceList';
  }
}

export interface ReadResourceListOptions {
  signal?: AbortSignal;
  /** Each resource, with the URL of the document that lists it; awaited before the reading goes on. */
  onEntry: (entry: Entry, documentUrl: string) => void | Promise<void>;
  onNote?: (note: string) => void;
  /** What the reader found against the spec in each document read (the index and each part). */
  onFindings?: (documentUrl: string, findings: Finding[]) => void;
}

/** Reads `listUrl` whole; resolves with its top document. Rejects with NotAResourceList for one that is no Resource List. */
export async function readResourceList(http: Http, listUrl: string, o: ReadResourceListOptions): Promise<LoadedDocument> {
  const children: string[] = [];
  const maybeParts: Entry[] = [];
  let isIndex = false;
  const top = await loadDocument(http, listUrl, {
    signal: o.signal,
    onStart: (head) => {
      isIndex = head.isIndex;
      // Known before the first entry: nothing of a document that is not a Resource List is applied.
      if (head.capability !== 'resourcelist') throw new NotAResourceList(`${clip(listUrl)} is a ${head.capability}, not a Resource List`);
    },
    onEntry: (entry) => {
      if (isIndex || entry.md.capability === 'resourcelist') return void children.push(entry.loc);
      if (entry.md.at !== undefined || entry.md.completed !== undefined) return void maybeParts.push(entry);
      return o.onEntry(entry, listUrl);
    },
  });
  if (top.summary.capability !== 'resourcelist') throw new NotAResourceList(`${clip(listUrl)} is a ${top.summary.capability}, not a Resource List`);
  o.onFindings?.(listUrl, top.summary.findings);

  /** True when `child` was read as a part; false when `maybe` (its entry) turned out to be no list. */
  const readPart = async (child: string, maybe: Entry | null): Promise<boolean> => {
    const notAList = () => new NotAResourceList(`${clip(child)}, listed in the Resource List Index, is not a Resource List`);
    let started = false;
    let landed = child;
    try {
      const doc = await loadDocument(http, child, {
        signal: o.signal,
        onResponse: (url) => void (landed = url),
        onStart: (head) => {
          // A part that redirects to the index itself names it as surely as its own URL would: one part fewer, as
          // for an index naming itself (below), not a part that is an index, which stopped the whole run.
          if (head.isIndex && namesOthers && own.has(listKey(landed))) throw new IsTheIndex();
          if (head.capability !== 'resourcelist' || head.isIndex) throw notAList();
          started = true;
        },
        onEntry: (entry) => o.onEntry(entry, child),
      });
      if (doc.summary.capability !== 'resourcelist' || doc.summary.isIndex) throw notAList();
      o.onFindings?.(child, doc.summary.findings);
      return true;
    } catch (err) {
      if (err instanceof IsTheIndex) {
        redirectsToIndex.push(child);
        return true;
      }
      // Read, and not a Resource List (nothing of it was taken): the dated entry is a resource after all. One that
      // could not be had (404, a network error) may well be a part: the reading stops, as for any part, rather than
      // taking for gone what that part lists.
      const notAResourceList = err instanceof NotAResourceList || (err instanceof DocumentError && err.code !== 'aborted' && err.code !== 'io' && err.code !== 'too-large');
      if (maybe === null || started || o.signal?.aborted || !notAResourceList) throw err;
      return false;
    }
  };
  // Whether a dated entry turned out a list is kept with the parts read.
  const read = new Map<string, boolean>();
  // An index that names itself among other parts is one part fewer, not a part that is an index (which stopped the
  // run). One that names nothing else lists no resource at all: refused as before, rather than read as empty.
  const own = new Set([listKey(listUrl), listKey(top.finalUrl)]);
  const redirectsToIndex: string[] = [];
  const namesOthers = children.some((c) => !own.has(listKey(c)));
  if (children.some((c) => !own.has(listKey(c)))) for (const key of own) read.set(key, true);
  let namesItself = false;
  let partsRepeated = 0;
  for (const child of children) {
    const key = listKey(child);
    if (read.has(key)) {
      partsRepeated++;
      if (own.has(key)) namesItself = true;
      continue;
    }
    read.set(key, true);
    await readPart(child, null);
  }
  let parts = children.length;
  let resources = 0;
  for (const entry of maybeParts) {
    const key = listKey(entry.loc);
    let isList = read.get(key);
    if (isList === undefined) {
      isList = await readPart(entry.loc, entry);
      read.set(key, isList);
    } else if (isList) {
      partsRepeated++;
      if (own.has(key)) namesItself = true;
    }
    if (isList) parts++;
    else {
      resources++;
      await o.onEntry(entry, listUrl);
    }
  }
  // Every part led back to the index: it lists no resource at all, and is refused as one naming only itself is.
  if (redirectsToIndex.length > 0 && children.every((c) => own.has(listKey(c)) || redirectsToIndex.includes(c)) && maybeParts.length === 0) {
    throw new NotAResourceList(`${clip(redirectsToIndex[0]!)}, listed in the Resource List Index, is not a Resource List`);
  }
  if (redirectsToIndex.length > 0) {
    o.onNote?.(
      `${redirectsToIndex.length.toLocaleString('en')} part${redirectsToIndex.length === 1 ? '' : 's'} of the Resource List Index ${clip(listUrl)} redirect${redirectsToIndex.length === 1 ? 's' : ''} to the index itself ` +
        `(the first: ${clip(redirectsToIndex[0]!)}); read once, as the index.`,
    );
  }
  if (partsRepeated > 0) {
    o.onNote?.(`The Resource List Index ${clip(listUrl)} names a list it names before${namesItself ? ', or itself,' : ''} ${partsRepeated.toLocaleString('en')} time${partsRepeated === 1 ? '' : 's'}; each list is read once.`);
  }
  if (!top.summary.isIndex && parts > 0) {
    o.onNote?.(`${clip(listUrl)} is written as a <urlset>, but ${parts} of its entries are Resource Lists themselves: read as the parts of a Resource List Index.`);
  }
  if (resources > 0) {
    o.onNote?.(
      `${resources} entr${resources === 1 ? 'y' : 'ies'} of ${clip(listUrl)} carr${resources === 1 ? 'ies' : 'y'} \`at\` or \`completed\`, as the parts of an index do, but ` +
        `${resources === 1 ? 'is not a Resource List: it was mirrored as a resource.' : 'are not Resource Lists: they were mirrored as resources.'}`,
    );
  }
  return top;
}
