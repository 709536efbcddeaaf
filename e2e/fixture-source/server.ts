// The fixture Source's HTTP server: 127.0.0.1 only, every request logged, documents generated per request from
// the current state.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { brokenDocuments } from './broken.ts';
import { hostileDump } from './hostile-dump.ts';
import { brokenSourceDocuments } from './broken-source.ts';
import * as d1 from './dataset1.ts';
import * as d2 from './dataset2.ts';
import { EXTENSIONS } from './bodies.ts';
import { PATHS } from './paths.ts';
import { FixtureHub, type HubOptions } from './hub.ts';
import * as site from './site.ts';
import { SourceState, type ChangeKind, type ChangeRecord } from './state.ts';
import { serveSloppy, type SloppyControls } from './sloppy.ts';

export interface FixtureSourceOptions {
  /** 0 (default) = a free port. */
  port?: number;
  /** Resources of dataset1 at start. Default 100. */
  resources?: number;
  /** Parts of the dataset2 Resource List Index. Default 3. */
  bigListParts?: number;
  /** Entries per part. Default 20,000 (3 × 20,000 = 60,000 > 50,000). */
  bigListEntries?: number;
  /** Changes per dataset1 Change List before it closes. Default 40. */
  changeListSize?: number;
  seed?: number;
  /** Discovery routes to offer; all on by default. */
  routes?: Partial<site.Routes>;
  /** How long `/slow` and `/slow-body` stall. Default 60000. */
  slowMs?: number;
  /** Milliseconds every resource (`…/res/N`) waits before it answers: a slow Source, so a run's progress is seen. Default 0. */
  resourceDelayMs?: number;
  /** The WebSub hub's leases, retries and delivery concurrency. */
  hub?: Partial<Omit<HubOptions, 'url' | 'capabilityListFor'>>;
  /** dataset1's Capability List names the Resource Dump Index and the Change Dump Index instead of the plain dumps. */
  dumpIndexes?: boolean;
  /** The dump packages' manifests leave out their `up` link (a sloppy manifest; see dataset1.ts). */
  manifestsWithoutUp?: boolean;
  /** When set, every request must carry exactly this Authorization header value, else 401. */
  auth?: string;
  /** With `auth`: the WebSub hub answers without it (a hub is often another service than the Source). */
  openHub?: boolean;
  /**
   * With `auth`: only paths under these prefixes need it (a protected area, e.g. `/dataset1/`); the rest, such as the
   * Source Description, stays open. Absent: the whole Source is protected.
   */
  authOnly?: string[];
  /** Base URL of the `rel="duplicate"` mirror locations (default: this server's `/mirror`). */
  duplicateBase?: string;
}

/**
 * What a path does instead of its normal answer (see `setBroken`). `cutAfter`: the normal answer's first N bytes of
 * body, then the connection drops, once (the path then answers normally again): a download that breaks off.
 */
export type Failure =
  | { status: number; body?: string; headers?: Record<string, string>; times?: number }
  | { cutAfter: number }
  /** The normal answer's first N bytes of body, then nothing more (the connection stays open), once. */
  | { stallAfter: number }
  /** The normal answer's body one byte every `trickleMs` (never silent long enough for an idle timeout). */
  | { trickleMs: number }
  | 'hang'
  | 'reset'
  /** Headers and half the body, then nothing (a stalled body). */
  | 'stall'
  /** The normal answer with its bytes altered (same length): a fixity mismatch. */
  | 'corrupt'
  /** The normal answer with 10 bytes more (and a Content-Length that says so). */
  | 'long';

export interface LoggedRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
}

export interface HubRequest extends LoggedRequest {
  body: string;
}

export interface FixtureSource {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Where the Capability Lists' `up` links point (the well-known URI, or /source-description.xml without it). */
  sourceDescriptionUrl: string;
  routes: site.Routes;
  paths: typeof PATHS;
  /** dataset1's resources and change log. */
  state: SourceState;
  /**
   * Create, update or delete dataset1 resources; each change advances the logical clock by one second. `id`: update
   * or delete that resource (when live) instead of one picked at random.
   */
  change(kind: ChangeKind, count?: number, id?: number): ChangeRecord[];
  /** Change-notification payloads, one per `change()` call, newest last (also served at the topic URL). */
  notifications: string[];
  requests: LoggedRequest[];
  /** POSTs received by the hub. */
  hubRequests: HubRequest[];
  /** Broken entries for the sloppy view of dataset1 (`/sloppy/…`, see sloppy.ts). */
  sloppy: SloppyControls;
  /** The WebSub hub at PATHS.hub: its subscriptions, deliveries and faults on demand. */
  hub: FixtureHub;
  /** Make a path (without query) fail; null restores it. */
  setBroken(path: string, failure: Failure | null): void;
  /**
   * Answer every request whose path starts with `prefix` with this status and headers (a Source refusing everything,
   * 503 with Retry-After or 429, for as long as it is set), before any `setBroken` failure; null stops it.
   */
  setRefusing(refusal: { prefix: string; status: number; headers?: Record<string, string> } | null): void;
  /** Changes `resourceDelayMs` from now on. */
  setResourceDelay(ms: number): void;
  /** Answers `path` (exactly, query aside) `ms` later from now on; 0 removes the delay. */
  setPathDelay(path: string, ms: number): void;
  /**
   * Changes the Authorization value every request must carry (`auth`) from now on; null: none needed. `only`: the
   * protected area (see `authOnly`); absent: as it was.
   */
  setAuth(value: string | null, only?: string[]): void;
  close(): Promise<void>;
}

const XML = 'application/xml';
const HTML = 'text/html; charset=utf-8';

export async function startFixtureSource(options: FixtureSourceOptions = {}): Promise<FixtureSource> {
  const routes: site.Routes = { wellKnown: true, htmlLink: true, linkHeader: true, robots: true, ...options.routes };
  const slowMs = options.slowMs ?? 60_000;
  const requests: LoggedRequest[] = [];
  const hubRequests: HubRequest[] = [];
  const notifications: string[] = [];
  const failures = new Map<string, Failure>();
  let refusing: { prefix: string; status: number; headers?: Record<string, string> } | null = null;
  const timers = new Set<NodeJS.Timeout>();
  let handle: (req: IncomingMessage, res: ServerResponse, path: string) => void | Promise<void> = () => {};
  let resourceDelayMs = options.resourceDelayMs ?? 0;
  const pathDelays = new Map<string, number>();
  let auth = options.auth;
  let authOnly = options.authOnly;
  const needsAuth = (path: string) => {
    const bare = path.split('?')[0]!;
    if (options.openHub && bare === PATHS.hub) return false;
    return authOnly === undefined || authOnly.some((prefix) => bare.startsWith(prefix));
  };

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? 'GET', path, headers: flatten(req.headers) });
    if (auth !== undefined && req.headers.authorization !== auth && needsAuth(path)) {
      return void send(res, 401, 'text/plain', 'Unauthorized\n', { 'www-authenticate': 'Bearer realm="fixture", Basic realm="fixture"' });
    }
    if (refusing !== null && path.startsWith(refusing.prefix)) return void send(res, refusing.status, 'text/plain', `Refused ${refusing.status}\n`, refusing.headers);
    const failure = failures.get(path.split('?')[0]);
    if (failure === 'hang') return;
    if (failure === 'reset') return void req.socket.destroy();
    if (failure === 'stall' || failure === 'corrupt' || failure === 'long') alter(res, failure);
    else if (failure && 'cutAfter' in failure) {
      failures.delete(path.split('?')[0]);
      cutAfter(res, failure.cutAfter);
    } else if (failure && 'stallAfter' in failure) {
      failures.delete(path.split('?')[0]);
      cutAfter(res, failure.stallAfter, false);
    } else if (failure && 'trickleMs' in failure) {
      trickle(res, failure.trickleMs);
    } else if (failure) {
      // `times`: fail that many requests, then answer normally again.
      if (failure.times !== undefined && --failure.times <= 0) failures.delete(path.split('?')[0]);
      return void send(res, failure.status, 'text/plain', failure.body ?? `Failure ${failure.status}`, failure.headers);
    }
    const answer = () =>
      Promise.resolve(handle(req, res, path)).catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, 'text/plain', `Fixture error: ${String(err)}`);
        else res.destroy();
      });
    const pathDelay = pathDelays.get(path.split('?')[0]!);
    if (pathDelay !== undefined) stall(pathDelay, () => void answer());
    else if (resourceDelayMs > 0 && /\/res\/\d+/.test(path)) stall(resourceDelayMs, () => void answer());
    else void answer();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sourceDescriptionUrl = base + (routes.wellKnown ? PATHS.wellKnown : PATHS.sourceDescription);
  const seed = options.seed ?? 1;
  const state = new SourceState({ seed, resources: options.resources ?? 100, changeListSize: options.changeListSize ?? 40, base });
  const ctx1: d1.Dataset1Context = { base, state, sourceDescriptionUrl, dumpIndexes: options.dumpIndexes ?? false, duplicateBase: options.duplicateBase, manifestsWithoutUp: options.manifestsWithoutUp };
  const ctx2: d2.Dataset2Context = {
    base,
    seed,
    parts: options.bigListParts ?? 3,
    entriesPerPart: options.bigListEntries ?? 20_000,
    sourceDescriptionUrl,
  };
  const topic = base + PATHS.dataset1.notifications;
  const hub = new FixtureHub({
    url: base + PATHS.hub,
    capabilityListFor: (t) => (t === topic ? base + PATHS.dataset1.capabilityList : null),
    ...options.hub,
  });
  state.onChange((records) => {
    const payload = d1.notificationPayload(ctx1, records);
    notifications.push(payload);
    // The Source notifies its hub, which delivers to every subscriber (CN §4.1, §4.3).
    hub.publish(topic, payload);
  });
  const sloppy: SloppyControls = { extraResources: [], extraChanges: [], extraIndexEntries: [] };
  const initialChanges = state.changes.length;

  const stall = (ms: number, then: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      then();
    }, ms);
    timers.add(timer);
  };

  const exact: Record<string, (req: IncomingMessage, res: ServerResponse) => void | Promise<void>> = {
    [PATHS.home]: (_req, res) => send(res, 200, HTML, site.homePage(routes)),
    [PATHS.linkHeaderPage]: (_req, res) =>
      send(res, 200, HTML, site.linkHeaderPage(), routes.linkHeader ? { link: site.linkHeaderValue() } : {}),
    [PATHS.robots]: (_req, res) =>
      routes.robots ? send(res, 200, 'text/plain; charset=utf-8', site.robotsTxt(base)) : notFound(res),
    [PATHS.plainSitemap]: (_req, res) => send(res, 200, XML, site.plainSitemap(base)),
    [PATHS.wellKnown]: (_req, res) => (routes.wellKnown ? send(res, 200, XML, site.sourceDescription(base)) : notFound(res)),
    [PATHS.sourceDescription]: (_req, res) => send(res, 200, XML, site.sourceDescription(base)),
    [PATHS.about]: (_req, res) => send(res, 200, HTML, site.aboutPage('About the fixture Source')),
    [PATHS.dataset1.about]: (_req, res) => send(res, 200, HTML, site.aboutPage('About dataset1')),
    [PATHS.dataset2.about]: (_req, res) => send(res, 200, HTML, site.aboutPage('About dataset2')),
    [PATHS.hostileDump.resourceDump]: async (_req, res) => send(res, 200, XML, (await hostileDump(base, PATHS.hostileDump)).dump),
    [PATHS.hostileDump.package]: async (req, res) => sendPackage(req, res, (await hostileDump(base, PATHS.hostileDump)).zip),
    [PATHS.hostileDump.capabilityList]: async (_req, res) => send(res, 200, XML, (await hostileDump(base, PATHS.hostileDump)).capabilityList),
    '/style.css': (_req, res) => send(res, 200, 'text/css', 'body { font-family: sans-serif; }\n'),
    [PATHS.slow]: (_req, res) => stall(slowMs, () => send(res, 200, 'text/plain', 'finally\n')),
    [PATHS.slowBody]: (_req, res) => {
      res.writeHead(200, { 'content-type': XML });
      res.write('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"');
      stall(slowMs, () => res.end('/>\n'));
    },
    [PATHS.redirectLoop]: (_req, res) => redirect(res, 302, '/redirect-loop/b'),
    '/redirect-loop/b': (_req, res) => redirect(res, 302, PATHS.redirectLoop),
    [PATHS.moved]: (_req, res) => redirect(res, 301, PATHS.dataset1.capabilityList),
    [PATHS.redirectChain]: (_req, res) => redirect(res, 302, PATHS.moved),
    [PATHS.hub]: (req, res) => {
      if (req.method !== 'POST') return send(res, 405, 'text/plain', 'POST only\n', { allow: 'POST' });
      return readBody(req).then((body) => {
        hubRequests.push({ method: 'POST', path: req.url ?? '', headers: flatten(req.headers), body });
        return hub.handle(req, res, body);
      });
    },
    [PATHS.dataset1.capabilityList]: (_req, res) => send(res, 200, XML, d1.capabilityList(ctx1)),
    [PATHS.dataset1.resourceList]: (_req, res) => send(res, 200, XML, d1.resourceList(ctx1)),
    [PATHS.dataset1.resourceListGzip]: (_req, res) => sendBody(res, 'application/gzip', gzipSync(d1.resourceList(ctx1))),
    [PATHS.dataset1.resourceDump]: async (_req, res) => send(res, 200, XML, (await d1.resourceDump(ctx1))!),
    [PATHS.dataset1.resourceDumpIndex]: (_req, res) => send(res, 200, XML, d1.resourceDumpIndex(ctx1)),
    [PATHS.dataset1.changeDumpIndex]: (_req, res) => send(res, 200, XML, d1.changeDumpIndex(ctx1)),
    [PATHS.dataset1.changeListIndex]: (_req, res) => send(res, 200, XML, d1.changeListIndex(ctx1)),
    [PATHS.dataset1.changeDump]: async (_req, res) => send(res, 200, XML, (await d1.changeDump(ctx1))!),
    [PATHS.dataset1.notifications]: (_req, res) =>
      send(res, 200, XML, notifications.at(-1) ?? '', {
        link: `<${base}${PATHS.dataset1.notifications}>; rel="self", <${base}${PATHS.hub}>; rel="hub"`,
      }),
    [PATHS.dataset2.capabilityList]: (_req, res) => send(res, 200, XML, d2.capabilityList(ctx2)),
    [PATHS.dataset2.resourceListIndex]: (_req, res) => send(res, 200, XML, d2.resourceListIndex(ctx2)),
  };

  const resource = (id: number) => state.resources.get(id);
  const patterns: [RegExp, (m: RegExpMatchArray, req: IncomingMessage, res: ServerResponse) => void | Promise<void>][] = [
    [
      /^\/(?:dataset1|mirror\/dataset1|upstream\/dataset1)\/res\/(\d+)(?:\.(\w+))?$/,
      (m, _req, res) => {
        const r = resource(Number(m[1]));
        if (!r || (m[2] !== undefined && m[2] !== EXTENSIONS[r.type])) return notFound(res);
        if (r.deleted) return send(res, 410, 'text/plain', 'Gone\n');
        const rep = state.representation(r.id, r.version);
        const etag = `"${rep.sha256.slice(0, 16)}"`;
        const lastModified = new Date(r.lastmod).toUTCString();
        // Conditional requests, as a static file server answers them.
        const inm = _req.headers['if-none-match'];
        const ims = _req.headers['if-modified-since'];
        if (inm !== undefined ? inm === etag : ims !== undefined && Date.parse(ims) >= Date.parse(lastModified)) {
          res.writeHead(304, { etag, 'last-modified': lastModified });
          return void res.end();
        }
        sendBody(res, rep.type, rep.body, { 'last-modified': lastModified, etag });
      },
    ],
    [
      /^\/dataset1\/alt\/(\d+)\.txt$/,
      (m, _req, res) => {
        const r = resource(Number(m[1]));
        if (!r || r.deleted) return notFound(res);
        sendBody(res, 'text/plain', d1.alternateText(ctx1, r.id, r.version));
      },
    ],
    [
      /^\/dataset1\/meta\/(\d+)\.xml$/,
      (m, _req, res) => {
        const r = resource(Number(m[1]));
        return r && !r.deleted ? send(res, 200, XML, d1.metadataRecord(ctx1, r)) : notFound(res);
      },
    ],
    [
      /^\/dataset1\/mementos\/(\d+)\/v(\d+)$/,
      (m, _req, res) => {
        const r = resource(Number(m[1]));
        const version = Number(m[2]);
        if (!r || version < 1 || version > r.version) return notFound(res);
        const rep = state.representation(r.id, version);
        sendBody(res, rep.type, rep.body, { memento: 'true' });
      },
    ],
    [
      /^\/dataset1\/timegate\/(\d+)$/,
      (m, _req, res) => {
        const r = resource(Number(m[1]));
        if (!r) return notFound(res);
        res.setHeader('vary', 'accept-datetime');
        redirect(res, 302, `/dataset1/mementos/${r.id}/v${r.version}`);
      },
    ],
    [
      /^\/dataset1\/timemap\/(\d+)$/,
      (m, _req, res) => {
        const r = resource(Number(m[1]));
        return r ? send(res, 200, 'application/link-format', d1.timemap(ctx1, r)) : notFound(res);
      },
    ],
    [/^\/dataset1\/collections\/(\d+)$/, (m, _req, res) => send(res, 200, HTML, site.aboutPage(`Collection ${m[1]}`))],
    [
      /^\/dataset1\/patches\/(\d+)\/v(\d+)\.json-patch$/,
      (m, _req, res) => {
        const r = resource(Number(m[1]));
        const version = Number(m[2]);
        if (!r || version < 2 || version > r.version) return notFound(res);
        // From the version before to this one: a `test` of the version first, so it applies to that version only.
        const before = JSON.parse(state.representation(r.id, version - 1).body.toString('utf8')) as Record<string, unknown>;
        const after = JSON.parse(state.representation(r.id, version).body.toString('utf8')) as Record<string, unknown>;
        const ops: unknown[] = [{ op: 'test', path: '/version', value: before.version }];
        for (const key of Object.keys(after)) if (JSON.stringify(after[key]) !== JSON.stringify(before[key])) ops.push({ op: 'replace', path: `/${key}`, value: after[key] });
        send(res, 200, 'application/json-patch+json', JSON.stringify(ops) + '\n');
      },
    ],
    [
      /^\/dataset1\/(resourcedump|changedump)-(\d+)\.xml$/,
      async (m, _req, res) => {
        const doc = m[1] === 'resourcedump' ? await d1.resourceDump(ctx1, Number(m[2])) : await d1.changeDump(ctx1, Number(m[2]));
        return doc === null ? notFound(res) : send(res, 200, XML, doc);
      },
    ],
    [
      /^\/dataset1\/changelists\/(\d+)\.xml$/,
      (m, _req, res) => {
        const doc = d1.changeList(ctx1, Number(m[1]));
        return doc === null ? notFound(res) : send(res, 200, XML, doc);
      },
    ],
    [
      /^\/dataset1\/changedump\/(\d+)(\.zip|-manifest\.xml)$/,
      async (m, req, res) => {
        const built = d1.changeDumpPackage(ctx1, Number(m[1]));
        if (!built) return notFound(res);
        const { zip, manifest } = await built;
        return m[2] === '.zip' ? sendPackage(req, res, zip) : send(res, 200, XML, manifest);
      },
    ],
    [
      /^\/dataset1\/resourcedump\/part(\d+)(\.zip|-manifest\.xml)$/,
      async (m, req, res) => {
        const built = d1.resourceDumpPackage(ctx1, Number(m[1]));
        if (!built) return notFound(res);
        const { zip, manifest } = await built;
        return m[2] === '.zip' ? sendPackage(req, res, zip) : send(res, 200, XML, manifest);
      },
    ],
    [
      /^\/dataset2\/resourcelist-(\d+)\.xml$/,
      (m, req, res) => {
        const part = Number(m[1]);
        if (part < 1 || part > ctx2.parts) return notFound(res);
        return stream(req, res, XML, d2.resourceListPart(ctx2, part));
      },
    ],
    [
      /^\/dataset2\/res\/(\d+)$/,
      (m, _req, res) => {
        const rep = d2.representation(ctx2, Number(m[1]));
        if (!rep) return notFound(res);
        sendBody(res, rep.type, rep.body, { 'last-modified': new Date(d2.lastmodOf(Number(m[1]))).toUTCString() });
      },
    ],
  ];

  const broken = { ...brokenDocuments(base, d1.capabilityList(ctx1)), ...brokenSourceDocuments(base) };

  handle = (req, res, rawPath) => {
    const path = rawPath.split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD' && path !== PATHS.hub) {
      return send(res, 405, 'text/plain', 'Method not allowed\n', { allow: 'GET, HEAD' });
    }
    const handler = exact[path];
    if (handler) return handler(req, res);
    if (serveSloppy(base, state, initialChanges, sloppy, req, res, path)) return;
    const doc = broken[path];
    if (doc) return send(res, 200, doc.contentType, doc.body);
    for (const [pattern, fn] of patterns) {
      const match = path.match(pattern);
      if (match) return fn(match, req, res);
    }
    return notFound(res);
  };

  return {
    url: base,
    sourceDescriptionUrl,
    routes,
    paths: PATHS,
    state,
    change: (kind, count, id) => state.change(kind, count, id),
    notifications,
    requests,
    hubRequests,
    setPathDelay(path, ms) {
      if (ms > 0) pathDelays.set(path, ms);
      else pathDelays.delete(path);
    },
    setResourceDelay(ms) {
      resourceDelayMs = ms;
    },
    setAuth(value, only) {
      auth = value ?? undefined;
      if (only !== undefined) authOnly = only;
    },
    sloppy,
    hub,
    setRefusing(refusal) {
      refusing = refusal;
    },
    setBroken(path, failure) {
      if (failure === null) failures.delete(path);
      else failures.set(path, failure);
    },
    close: () =>
      new Promise<void>((resolve) => {
        hub.close();
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function flatten(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

function send(res: ServerResponse, status: number, contentType: string | null, body: string, headers: Record<string, string> = {}): void {
  const buffer = Buffer.from(body, 'utf8');
  res.writeHead(status, { ...(contentType ? { 'content-type': contentType } : {}), 'content-length': buffer.length, ...headers });
  res.end(buffer);
}

function sendBody(res: ServerResponse, contentType: string, body: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': body.length, ...headers });
  res.end(body);
}

/**
 * Packages answer ranges as a real Source's static files do (RFC 9110 §14: `bytes=N-`, `bytes=A-B`, `bytes=-N`),
 * guarded by If-Range on their strong ETag.
 */
function sendPackage(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const etag = `"${createHash('md5').update(body).digest('hex')}"`;
  const headers = { etag, 'accept-ranges': 'bytes' };
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  const ifRange = req.headers['if-range'];
  if (range === null || (range[1] === '' && range[2] === '') || (ifRange !== undefined && ifRange !== etag)) return sendBody(res, 'application/zip', body, headers);
  const suffix = range[1] === '';
  const start = suffix ? Math.max(0, body.length - Number(range[2])) : Number(range[1]);
  const end = suffix || range[2] === '' ? body.length - 1 : Math.min(body.length - 1, Number(range[2]));
  if (start >= body.length || end < start) {
    res.writeHead(416, { 'content-range': `bytes */${body.length}`, 'content-length': 0 });
    return void res.end();
  }
  res.writeHead(206, {
    'content-type': 'application/zip',
    'content-length': end - start + 1,
    'content-range': `bytes ${start}-${end}/${body.length}`,
    ...headers,
  });
  res.end(body.subarray(start, end + 1));
}

/** Alters an answer on its way out: `stall` sends half its body and stops; `corrupt` flips bytes; `long` adds 10. */
function alter(res: ServerResponse, how: 'stall' | 'corrupt' | 'long'): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: Record<string, string | number>) => ServerResponse;
  const end = res.end.bind(res) as (chunk?: Buffer) => ServerResponse;
  res.writeHead = ((status: number, headers?: Record<string, string | number>) => {
    if (how === 'long' && headers?.['content-length'] !== undefined) headers = { ...headers, 'content-length': Number(headers['content-length']) + 10 };
    return writeHead(status, headers);
  }) as typeof res.writeHead;
  res.end = ((chunk?: unknown) => {
    if (chunk === undefined || typeof chunk === 'function') return end();
    const body = Buffer.from(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array));
    if (how === 'stall') {
      res.write(body.subarray(0, Math.floor(body.length / 2)));
      return res;
    }
    if (how === 'long') return end(Buffer.concat([body, Buffer.from('0123456789')]));
    for (let i = 0; i < body.length; i += 7) body[i] = body[i] ^ 0x20;
    return end(body);
  }) as typeof res.end;
}

/** Lets the first `limit` bytes of the body through, then drops the connection (or, `drop` false, leaves it hanging). */
function cutAfter(res: ServerResponse, limit: number, drop = true): void {
  let sent = 0;
  const write = res.write.bind(res) as (chunk: Buffer) => boolean;
  const end = res.end.bind(res) as () => void;
  const pass = (chunk: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    const room = limit - sent;
    if (room <= 0) return;
    sent += Math.min(room, bytes.length);
    write(bytes.subarray(0, room));
  };
  res.write = ((chunk: unknown) => {
    pass(chunk);
    if (sent >= limit && drop) setTimeout(() => res.destroy(), 20);
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: unknown) => {
    pass(chunk);
    if (sent >= limit) {
      if (drop) setTimeout(() => res.destroy(), 20);
    } else end();
    return res;
  }) as typeof res.end;
}

/** Sends the body a byte at a time, one every `ms`, until it is all sent or the client goes away. */
function trickle(res: ServerResponse, ms: number): void {
  const end = res.end.bind(res) as (chunk?: Buffer) => ServerResponse;
  res.end = ((chunk?: unknown) => {
    if (chunk === undefined || typeof chunk === 'function') return end();
    const body = Buffer.from(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array));
    let i = 0;
    const timer = setInterval(() => {
      if (res.destroyed || i >= body.length) {
        clearInterval(timer);
        if (!res.destroyed) end();
        return;
      }
      res.write(body.subarray(i, ++i));
    }, ms);
    res.on('close', () => clearInterval(timer));
    return res;
  }) as typeof res.end;
}

function notFound(res: ServerResponse): void {
  send(res, 404, 'text/plain', 'Not Found\n');
}

function redirect(res: ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location, 'content-length': 0 });
  res.end();
}

/** Writes generated chunks with backpressure, so a slow client holds back generation. */
async function stream(req: IncomingMessage, res: ServerResponse, contentType: string, chunks: Iterable<string>): Promise<void> {
  res.writeHead(200, { 'content-type': contentType });
  if (req.method === 'HEAD') return void res.end();
  for (const chunk of chunks) {
    if (res.destroyed) return;
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
  res.end();
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // The stub hub only needs to see notifications, not to be fed without limit.
      if (size <= 1024 * 1024) chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
