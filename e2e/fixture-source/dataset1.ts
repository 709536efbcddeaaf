// dataset1: the small, changing set of resources. Resource List, Resource Dump (+ manifests), Change List Index
// and Change Lists, Change Dump (+ manifests), and the change-notification channel.
import { createHash } from 'node:crypto';
import { EXTENSIONS, generateBody, type BodyType } from './bodies.ts';
import { PATHS } from './paths.ts';
import { buildPackage } from './packages.ts';
import { BASE_TIME, iso, type ChangeRecord, type ChangeListSlice, type ResourceState, type SourceState } from './state.ts';
import { document, type EntrySpec, type LinkSpec } from './xml.ts';

export interface Dataset1Context {
  base: string;
  state: SourceState;
  /** Where `up` links of the Capability Lists point. */
  sourceDescriptionUrl: string;
  /** The Capability List names the Resource Dump Index and Change Dump Index instead of the plain dumps. */
  dumpIndexes?: boolean;
  /** Base of the `rel="duplicate"` locations; default `${base}/mirror`. */
  duplicateBase?: string;
  /** The packages' manifests leave out their `up` link (a MUST, §11.2/§13.2): a sloppy manifest, found by the reader. */
  manifestsWithoutUp?: boolean;
}

const P = PATHS.dataset1;
const PATCH_REL = 'http://www.openarchives.org/rs/terms/patch';

function up(ctx: Dataset1Context): LinkSpec {
  return { rel: 'up', href: ctx.base + P.capabilityList };
}

export function capabilityList(ctx: Dataset1Context): string {
  const url = (path: string) => ctx.base + path;
  return document(
    'urlset',
    { capability: 'capabilitylist' },
    [
      { rel: 'describedby', href: url(P.about), type: 'text/html' },
      { rel: 'up', href: ctx.sourceDescriptionUrl },
    ],
    [
      { loc: url(P.resourceList), md: { capability: 'resourcelist' } },
      { loc: url(ctx.dumpIndexes ? P.resourceDumpIndex : P.resourceDump), md: { capability: 'resourcedump' } },
      { loc: url(P.changeListIndex), md: { capability: 'changelist' } },
      { loc: url(ctx.dumpIndexes ? P.changeDumpIndex : P.changeDump), md: { capability: 'changedump' } },
      {
        loc: url(P.notifications),
        md: { capability: 'change-notification' },
        links: [{ rel: 'hub', href: url(PATHS.hub) }],
      },
    ],
  );
}

/** Links of every kind from spec section 14, spread over the resources by id. All point back at this server. */
export function relatedLinks(ctx: Dataset1Context, resource: ResourceState): LinkSpec[] {
  const { id, version, type } = resource;
  const ext = EXTENSIONS[type];
  const base = ctx.base;
  const rep = ctx.state.representation(id, version);
  const links: LinkSpec[] = [];
  if (id % 5 === 0) links.push({ rel: 'duplicate', href: `${ctx.duplicateBase ?? `${base}/mirror`}/dataset1/res/${id}.${ext}`, pri: 1, modified: resource.lastmod });
  if (type === 'text/html') links.push({ rel: 'alternate', href: `${base}/dataset1/alt/${id}.txt`, type: 'text/plain' });
  if (id % 11 === 0) links.push({ rel: 'canonical', href: `${base}/dataset1/res/${id}` });
  if (id % 7 === 0) links.push({ rel: 'describedby', href: `${base}/dataset1/meta/${id}.xml`, type: 'application/xml' });
  if (id % 4 === 0) {
    links.push({
      rel: 'memento',
      href: `${base}/dataset1/mementos/${id}/v${version}`,
      modified: resource.lastmod,
      hash: rep.hash,
      length: rep.body.length,
      type,
    });
    links.push({ rel: 'timegate', href: `${base}/dataset1/timegate/${id}` });
    links.push({ rel: 'timemap', href: `${base}/dataset1/timemap/${id}`, type: 'application/link-format' });
  }
  if (id % 6 === 0) links.push({ rel: 'collection', href: `${base}/dataset1/collections/${id % 3}` });
  if (id % 9 === 0) links.push({ rel: 'via', href: `${base}/upstream/dataset1/res/${id}.${ext}`, modified: resource.lastmod });
  return links;
}

function resourceEntry(ctx: Dataset1Context, resource: ResourceState): EntrySpec {
  const rep = ctx.state.representation(resource.id, resource.version);
  return {
    loc: ctx.state.locOf(resource.id),
    lastmod: resource.lastmod,
    changefreq: resource.id % 10 === 0 ? 'daily' : undefined,
    md: { hash: rep.hash, length: rep.body.length, type: resource.type },
    links: relatedLinks(ctx, resource),
  };
}

export function resourceList(ctx: Dataset1Context): string {
  const at = ctx.state.now();
  return document(
    'urlset',
    { capability: 'resourcelist', at, completed: at },
    [up(ctx)],
    ctx.state.live().map((r) => resourceEntry(ctx, r)),
  );
}

// ---- Resource Dump ------------------------------------------------------------------------------------------

interface Built {
  manifest: string;
  zip: Buffer;
  at: string;
}

const resourceDumpCache = new WeakMap<SourceState, Map<string, Promise<Built>>>();

function dumpParts(state: SourceState): ResourceState[][] {
  const live = state.live();
  const partSize = Math.max(1, Math.ceil(live.length / 2));
  const parts: ResourceState[][] = [];
  for (let i = 0; i < live.length; i += partSize) parts.push(live.slice(i, i + partSize));
  return parts;
}

/** The dump always reflects the current state; packages are rebuilt only after a change. */
export function resourceDumpPackage(ctx: Dataset1Context, part: number): Promise<Built> | null {
  const state = ctx.state;
  const parts = dumpParts(state);
  if (part < 1 || part > parts.length) return null;
  let cache = resourceDumpCache.get(state);
  if (!cache) resourceDumpCache.set(state, (cache = new Map()));
  const key = `${state.changes.length}:${part}`;
  let built = cache.get(key);
  if (!built) {
    const at = state.now();
    const resources = parts[part - 1];
    const manifest = document(
      'urlset',
      { capability: 'resourcedump-manifest', at, completed: at },
      ctx.manifestsWithoutUp ? [] : [up(ctx)],
      resources.map((r) => {
        const e = resourceEntry(ctx, r);
        return { ...e, md: { ...e.md, path: `/resources/${r.id}.${EXTENSIONS[r.type]}` } };
      }),
    );
    const files = resources.map((r) => ({
      path: `resources/${r.id}.${EXTENSIONS[r.type]}`,
      body: state.representation(r.id, r.version).body,
    }));
    built = buildPackage(manifest, files, new Date(BASE_TIME)).then((zip) => ({ manifest, zip, at }));
    // Packages of an older state are stale.
    for (const old of cache.keys()) if (!old.startsWith(`${state.changes.length}:`)) cache.delete(old);
    cache.set(key, built);
  }
  return built;
}

/** The Resource Dump, or (`part`) one child of the Resource Dump Index holding only that package. */
export async function resourceDump(ctx: Dataset1Context, part?: number): Promise<string | null> {
  const parts = dumpParts(ctx.state);
  if (part !== undefined && (part < 1 || part > parts.length)) return null;
  const built = await Promise.all(parts.map((_, i) => resourceDumpPackage(ctx, i + 1)!));
  const at = ctx.state.now();
  const links = part === undefined ? [up(ctx)] : [up(ctx), { rel: 'index', href: ctx.base + P.resourceDumpIndex }];
  return document(
    'urlset',
    { capability: 'resourcedump', at, completed: at },
    links,
    built
      .map((b, i) => ({
        loc: ctx.base + P.resourceDumpPackage(i + 1),
        md: { type: 'application/zip', length: b.zip.length, at: b.at, completed: b.at, hash: md5Token(b.zip) },
        links: [{ rel: 'contents', href: ctx.base + P.resourceDumpManifest(i + 1), type: 'application/xml' }],
      }))
      .filter((_, i) => part === undefined || i + 1 === part),
  );
}

export function resourceDumpIndex(ctx: Dataset1Context): string {
  const at = ctx.state.now();
  return document(
    'sitemapindex',
    { capability: 'resourcedump', at, completed: at },
    [up(ctx)],
    dumpParts(ctx.state).map((_, i) => ({ loc: ctx.base + P.resourceDumpChild(i + 1), md: { at } })),
  );
}

// ---- Change Lists -------------------------------------------------------------------------------------------

function changeEntry(ctx: Dataset1Context, record: ChangeRecord, path?: string): EntrySpec {
  const links: LinkSpec[] = [];
  if (record.change !== 'deleted') {
    links.push({
      rel: 'memento',
      href: `${ctx.base}/dataset1/mementos/${record.id}/v${record.version}`,
      modified: record.datetime,
    });
    if (record.id % 7 === 0) links.push({ rel: 'describedby', href: `${ctx.base}/dataset1/meta/${record.id}.xml`, type: 'application/xml' });
    if (record.change === 'updated' && record.type === 'application/json') {
      links.push({
        rel: PATCH_REL,
        href: `${ctx.base}/dataset1/patches/${record.id}/v${record.version}.json-patch`,
        // RFC 6902's media type, and for every other record the one the spec's Example 27 gives (§14.4).
        type: record.id % 2 === 0 ? 'application/json-patch+json' : 'application/json-patch',
      });
    } else if (record.change === 'updated' && record.type === 'text/plain') {
      // A patch of a type mirrors do not apply (and the fixture does not serve): they fetch the resource whole.
      links.push({ rel: PATCH_REL, href: `${ctx.base}/dataset1/patches/${record.id}/v${record.version}.diff`, type: 'text/x-diff' });
    }
  }
  return {
    loc: record.loc,
    lastmod: record.change === 'deleted' ? undefined : record.datetime,
    md: {
      change: record.change,
      datetime: record.datetime,
      hash: record.hash,
      length: record.length,
      type: record.change === 'deleted' ? undefined : record.type,
      path,
    },
    links,
  };
}

export function changeListIndex(ctx: Dataset1Context): string {
  const slices = ctx.state.changeLists();
  return document(
    'sitemapindex',
    { capability: 'changelist', from: iso(BASE_TIME) },
    [up(ctx)],
    slices.map((s) => ({
      loc: ctx.base + P.changeList(s.number),
      lastmod: s.records.at(-1)?.datetime,
      md: { from: s.from, until: s.until },
    })),
  );
}

export function changeList(ctx: Dataset1Context, n: number): string | null {
  const slice = ctx.state.changeLists().find((s) => s.number === n);
  if (!slice) return null;
  return document(
    'urlset',
    { capability: 'changelist', from: slice.from, until: slice.until },
    [up(ctx), { rel: 'index', href: ctx.base + P.changeListIndex }],
    slice.records.map((r) => changeEntry(ctx, r)),
  );
}

// ---- Change Dump --------------------------------------------------------------------------------------------

const changeDumpCache = new WeakMap<SourceState, Map<number, Promise<Built>>>();

function closedSlices(state: SourceState): ChangeListSlice[] {
  return state.changeLists().filter((s) => s.until !== undefined);
}

function bitstreamPath(record: ChangeRecord): string {
  return `/changes/${record.id}-v${record.version}.${EXTENSIONS[record.type as BodyType]}`;
}

/** One package per closed Change List: closed periods never change, so packages are built once. */
export function changeDumpPackage(ctx: Dataset1Context, n: number): Promise<Built> | null {
  const slice = closedSlices(ctx.state).find((s) => s.number === n);
  if (!slice) return null;
  let cache = changeDumpCache.get(ctx.state);
  if (!cache) changeDumpCache.set(ctx.state, (cache = new Map()));
  let built = cache.get(n);
  if (!built) {
    const manifest = document(
      'urlset',
      { capability: 'changedump-manifest', from: slice.from, until: slice.until },
      ctx.manifestsWithoutUp ? [] : [up(ctx)],
      slice.records.map((r) => changeEntry(ctx, r, r.change === 'deleted' ? undefined : bitstreamPath(r))),
    );
    const files = slice.records
      .filter((r) => r.change !== 'deleted')
      .map((r) => ({ path: bitstreamPath(r).slice(1), body: ctx.state.representation(r.id, r.version).body }));
    built = buildPackage(manifest, files, new Date(Date.parse(slice.until!))).then((zip) => ({ manifest, zip, at: slice.until! }));
    cache.set(n, built);
  }
  return built;
}

/** The Change Dump, or (`child`) one child of the Change Dump Index: packages 2·child−1 and 2·child. */
export async function changeDump(ctx: Dataset1Context, child?: number): Promise<string | null> {
  let slices = closedSlices(ctx.state);
  let links = [up(ctx)];
  let md: Record<string, string | undefined> = { capability: 'changedump', from: iso(BASE_TIME) };
  if (child !== undefined) {
    const mine = slices.filter((s) => Math.ceil(s.number / 2) === child);
    if (mine.length === 0) return null;
    const closed = mine.length === 2 || slices.some((s) => s.number > mine[0].number);
    md = { capability: 'changedump', from: mine[0].from, until: closed ? mine.at(-1)!.until : undefined };
    slices = mine;
    links = [up(ctx), { rel: 'index', href: ctx.base + P.changeDumpIndex }];
  }
  const built = await Promise.all(slices.map((s) => changeDumpPackage(ctx, s.number)!));
  return document(
    'urlset',
    md,
    links,
    slices.map((s, i) => ({
      loc: ctx.base + P.changeDumpPackage(s.number),
      lastmod: s.until,
      md: { type: 'application/zip', length: built[i].zip.length, from: s.from, until: s.until, hash: md5Token(built[i].zip) },
      links: [{ rel: 'contents', href: ctx.base + P.changeDumpManifest(s.number), type: 'application/xml' }],
    })),
  );
}

export function changeDumpIndex(ctx: Dataset1Context): string {
  const slices = closedSlices(ctx.state);
  const children = Math.ceil(slices.length / 2);
  return document(
    'sitemapindex',
    { capability: 'changedump', from: iso(BASE_TIME) },
    [up(ctx)],
    Array.from({ length: children }, (_, k) => {
      const mine = slices.filter((s) => Math.ceil(s.number / 2) === k + 1);
      return { loc: ctx.base + P.changeDumpChild(k + 1), md: { from: mine[0].from, until: mine.length === 2 ? mine[1].until : undefined } };
    }),
  );
}

// ---- Change notification ------------------------------------------------------------------------------------

/** The payload a Source sends to its hub for a batch of changes (Change Notification spec, example 1). */
export function notificationPayload(ctx: Dataset1Context, records: ChangeRecord[]): string {
  return document(
    'urlset',
    // Consecutive notifications cover consecutive intervals (CN §3): each starts where the one before ended, at
    // the datetime of the change before its first.
    { capability: 'change-notification', from: ctx.state.changes[records[0].seq - 2]?.datetime ?? iso(BASE_TIME), until: records[records.length - 1].datetime },
    [up(ctx)],
    records.map((r) => changeEntry(ctx, r)),
  );
}

// ---- Side resources named by links --------------------------------------------------------------------------

export function alternateText(ctx: Dataset1Context, id: number, version: number): Buffer {
  return generateBody({ seed: ctx.state.seed, dataset: 'dataset1-alt', id, version, type: 'text/plain', size: 'small' });
}

export function metadataRecord(ctx: Dataset1Context, resource: ResourceState): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">\n` +
    `  <dc:identifier>${ctx.state.locOf(resource.id)}</dc:identifier>\n` +
    `  <dc:title>dataset1 resource ${resource.id}</dc:title>\n` +
    `  <dc:format>${resource.type}</dc:format>\n` +
    `  <dc:date>${resource.lastmod}</dc:date>\n` +
    `</metadata>\n`
  );
}

export function timemap(ctx: Dataset1Context, resource: ResourceState): string {
  const lines = [`<${ctx.state.locOf(resource.id)}>; rel="original"`];
  for (let v = 1; v <= resource.version; v++) lines.push(`<${ctx.base}/dataset1/mementos/${resource.id}/v${v}>; rel="memento"`);
  return lines.join(',\n') + '\n';
}

function md5Token(buffer: Buffer): string {
  return `md5:${createMd5(buffer)}`;
}

function createMd5(buffer: Buffer): string {
  return createHash('md5').update(buffer).digest('hex');
}
