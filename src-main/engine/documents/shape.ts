// The shape of a document's entries: what their `loc`s have in common and which fields appear at all. The UI
// shows each `loc` relative to the common part and only the columns that have something in them.
import type { Entry } from './model.ts';

/** The fields an entry may carry besides `loc`: sitemap elements, every `rs:md` attribute, and `rs:ln` links. */
export const ENTRY_FIELDS = [
  'lastmod',
  'changefreq',
  'capability',
  'change',
  'datetime',
  'length',
  'type',
  'encoding',
  'hash',
  'path',
  'at',
  'completed',
  'from',
  'until',
  'links',
] as const;
export type EntryField = (typeof ENTRY_FIELDS)[number];

export interface EntryShape {
  /**
   * The longest start shared by every `loc`, cut after a `/` and shorter than every `loc` (so no entry is left with
   * nothing of its own); '' when the entries share no more than a scheme, or there are none.
   */
  prefix: string;
  /** The fields at least one entry has, in ENTRY_FIELDS order. */
  fields: EntryField[];
}

export const EMPTY_SHAPE: EntryShape = { prefix: '', fields: [] };

const MD_FIELDS = new Set<string>(ENTRY_FIELDS);
/** At least `scheme://authority/`: a prefix that stops inside the authority says nothing worth leaving out. */
const AT_LEAST_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\//i;

/** Keeps a shape up to date as entries stream past, in constant memory (the prefix only ever shrinks). */
export class ShapeTracker {
  #common: string | null = null;
  #shortest = Infinity;
  #fields = new Set<EntryField>();

  add(entry: Entry): void {
    const loc = entry.loc;
    if (this.#common === null) this.#common = loc;
    else if (!loc.startsWith(this.#common)) {
      const limit = Math.min(this.#common.length, loc.length);
      let i = 0;
      while (i < limit && this.#common.charCodeAt(i) === loc.charCodeAt(i)) i++;
      this.#common = this.#common.slice(0, i);
    }
    if (loc.length < this.#shortest) this.#shortest = loc.length;
    if (entry.lastmod !== undefined) this.#fields.add('lastmod');
    if (entry.changefreq !== undefined) this.#fields.add('changefreq');
    for (const key in entry.md) {
      if (MD_FIELDS.has(key) && entry.md[key as keyof typeof entry.md] !== undefined) this.#fields.add(key as EntryField);
    }
    if (entry.links.length > 0) this.#fields.add('links');
  }

  get shape(): EntryShape {
    return { prefix: cutPrefix(this.#common ?? '', this.#shortest), fields: ENTRY_FIELDS.filter((f) => this.#fields.has(f)) };
  }
}

/** The common start cut after its last `/`, and further back while it would swallow a whole `loc`. */
function cutPrefix(common: string, shortest: number): string {
  let end = common.lastIndexOf('/') + 1;
  while (end > 0 && end >= shortest) end = common.lastIndexOf('/', end - 2) + 1;
  const prefix = common.slice(0, end);
  return AT_LEAST_ORIGIN.test(prefix) ? prefix : '';
}

export function shapeOf(entries: Iterable<Entry>): EntryShape {
  const tracker = new ShapeTracker();
  for (const entry of entries) tracker.add(entry);
  return tracker.shape;
}
