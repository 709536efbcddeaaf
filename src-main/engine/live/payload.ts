// A change-notification payload (Change Notification §3): a `<urlset>` whose rs:md has capability
// "change-notification" and both `from` and `until`, one `<url>` per change. Read by the same streaming reader and
// conformance rules as every other document; anything else is refused with the reason.
import { clip } from '../clip.ts';
import { parseW3cDatetime } from '../documents/datetime.ts';
import { DocumentError } from '../documents/errors.ts';
import type { Entry, Finding } from '../documents/model.ts';
import { readDocument } from '../documents/reader.ts';

export interface ChangeItem {
  uri: string;
  change: string;
  datetime: string | null;
  /** datetime as epoch ms, null without one. */
  ms: number | null;
  entry: Entry;
}

export interface Notification {
  from: string;
  until: string;
  fromMs: number;
  untilMs: number;
  /** The `up` link (the Capability List), when given. */
  up: string | null;
  changes: ChangeItem[];
  findings: Finding[];
}

// Errors about one entry (or one link), not the notification: the entry fails alone, or (order, a datetime outside
// from/until, a malformed link) the change is still applied in datetime order, as collapse() does anyway.
const ENTRY_ERRORS = new Set(['missing-loc', 'relative-loc', 'missing-change', 'invalid-change', 'change-order', 'datetime-out-of-range', 'invalid-link', 'patch-link']);

export type PayloadResult = { ok: true; notification: Notification } | { ok: false; reason: string };

/** Reads a payload already held in memory (the callback server caps its size). */
async function* once(body: Uint8Array): AsyncGenerator<Uint8Array> {
  yield body;
}

export async function readNotification(body: Uint8Array, url: string): Promise<PayloadResult> {
  const changes: ChangeItem[] = [];
  let summary;
  try {
    summary = await readDocument(once(body), {
      url,
      maxBytes: Math.max(body.byteLength, 1),
      onEntry: (entry) => {
        const datetime = entry.md.datetime ?? null;
        changes.push({ uri: entry.loc, change: entry.md.change ?? '', datetime, ms: datetime === null ? null : parseW3cDatetime(datetime), entry });
      },
    });
  } catch (err) {
    if (err instanceof DocumentError) return { ok: false, reason: `not a readable ResourceSync document: ${err.message}` };
    throw err;
  }
  if (summary.isIndex) return { ok: false, reason: 'a <sitemapindex>; change notifications are <urlset> documents (CN §3)' };
  if (summary.capability !== 'change-notification') {
    return { ok: false, reason: `capability "${clip(summary.capability, 40)}", not "change-notification" (CN §3)` };
  }
  const { from, until } = summary.md;
  if (from === undefined || until === undefined) return { ok: false, reason: `rs:md has no ${from === undefined ? 'from' : 'until'} (both are mandatory, CN §3)` };
  const fromMs = parseW3cDatetime(from);
  const untilMs = parseW3cDatetime(until);
  if (fromMs === null || untilMs === null) return { ok: false, reason: `rs:md ${fromMs === null ? `from="${clip(from, 60)}"` : `until="${clip(until, 60)}"`} is not a W3C datetime` };
  if (untilMs < fromMs) return { ok: false, reason: `until (${clip(until, 60)}) is before from (${clip(from, 60)})` };
  // An entry that breaks a MUST (no loc, a bad change) fails alone when applied, as in incremental sync.
  const errors = summary.findings.filter((f) => f.severity === 'error' && !ENTRY_ERRORS.has(f.code));
  if (errors.length > 0) return { ok: false, reason: errors.map((f) => f.message).slice(0, 3).join('; ') };
  const up = summary.links.find((l) => l.rel === 'up')?.href ?? null;
  return { ok: true, notification: { from, until, fromMs, untilMs, up, changes, findings: summary.findings } };
}
