// dataset2: the large, static set behind a Resource List Index. Parts are generated on the fly while they are
// written, so a 60,000-entry index costs no memory.
import { generateBody, represent, type Representation } from './bodies.ts';
import { PATHS } from './paths.ts';
import { BASE_TIME, iso } from './state.ts';
import { document, documentEnd, documentStart, entry, type LinkSpec } from './xml.ts';

export interface Dataset2Context {
  base: string;
  seed: number;
  parts: number;
  entriesPerPart: number;
  sourceDescriptionUrl: string;
}

const P = PATHS.dataset2;
const AT = iso(BASE_TIME);
const COMPLETED = iso(BASE_TIME + 10 * 60 * 1000);

export function totalResources(ctx: Dataset2Context): number {
  return ctx.parts * ctx.entriesPerPart;
}

export function representation(ctx: Dataset2Context, id: number): Representation | null {
  if (!Number.isInteger(id) || id < 1 || id > totalResources(ctx)) return null;
  return represent(generateBody({ seed: ctx.seed, dataset: 'dataset2', id, version: 1, type: 'text/plain', size: 'small' }), 'text/plain');
}

export function lastmodOf(id: number): string {
  return iso(BASE_TIME - 86_400_000 + id * 1000);
}

export function capabilityList(ctx: Dataset2Context): string {
  return document(
    'urlset',
    { capability: 'capabilitylist' },
    [
      { rel: 'describedby', href: ctx.base + P.about, type: 'text/html' },
      { rel: 'up', href: ctx.sourceDescriptionUrl },
    ],
    [{ loc: ctx.base + P.resourceListIndex, md: { capability: 'resourcelist' } }],
  );
}

function up(ctx: Dataset2Context): LinkSpec {
  return { rel: 'up', href: ctx.base + P.capabilityList };
}

export function resourceListIndex(ctx: Dataset2Context): string {
  const parts = Array.from({ length: ctx.parts }, (_, i) => i + 1);
  return document(
    'sitemapindex',
    { capability: 'resourcelist', at: AT, completed: COMPLETED },
    [up(ctx)],
    parts.map((part) => ({ loc: ctx.base + P.resourceListPart(part), md: { at: AT, completed: COMPLETED } })),
  );
}

/** Yields the part in chunks of a few hundred entries. */
export function* resourceListPart(ctx: Dataset2Context, part: number): Generator<string> {
  const first = (part - 1) * ctx.entriesPerPart + 1;
  const last = part * ctx.entriesPerPart;
  yield documentStart('urlset', { capability: 'resourcelist', at: AT, completed: COMPLETED }, [
    up(ctx),
    { rel: 'index', href: ctx.base + P.resourceListIndex },
  ]);
  let chunk = '';
  for (let id = first; id <= last; id++) {
    const rep = representation(ctx, id)!;
    chunk += entry({
      loc: ctx.base + P.resource(id),
      lastmod: lastmodOf(id),
      md: { hash: rep.hash, length: rep.body.length, type: rep.type },
    });
    if (chunk.length > 64 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  yield chunk + documentEnd('urlset');
}
