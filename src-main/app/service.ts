// The service behind every adapter: one handler per contract command. Adapters only call `dispatch`, which
// validates arguments before a handler runs, and forward `events`.
import type { AddSourceResult, DiscoveryResult } from '../contract/types.ts';
import { discover, sameStartUrl } from '../engine/discovery/discover.ts';
import { RefusalMemory } from '../engine/refusals.ts';
import type { Store } from '../store/store.ts';
import type { SecretStore } from '../engine/mirror/secrets.ts';
import { createDispatch, type Dispatch, type ErrorLogger, type Handlers } from './dispatch.ts';
import { DocumentService } from './documents.ts';
import { InvalidArgumentsError, NotFoundError } from './errors.ts';
import { HttpStatusError } from '../engine/http/index.ts';
import { asUnauthorized, credentialsOf, signIn, SIGN_IN_STATUSES } from './sign-in.ts';
import { SourceSignIns } from './source-sign-ins.ts';
import { settingsTokenFor, tokenOriginOf, unboundToken } from './settings-token.ts';
import { normalizeStartUrl } from './start-url.ts';
import { EventHub } from './events.ts';
import { HttpHolder } from './http-holder.ts';
import { CheckService } from './check.ts';
import { DiscoveryRuns } from './discovery-runs.ts';
import { givenByApp, MirrorService } from './mirrors.ts';
import { LiveService } from './live.ts';

export interface ServiceDeps {
  /** Owned by the service from now on: `close()` closes it. */
  store: Store;
  adapter: 'electron' | 'http';
  openExternal?: (url: string) => Promise<void> | void;
  /** The system's folder dialog (desktop app); absent in a browser, where the page asks for a path. */
  chooseFolder?: () => Promise<string | null>;
  /** The system's save dialog (desktop app), offering `name`; absent in a browser, where the page asks for a path. */
  chooseSaveFile?: (name: string, format: 'json' | 'csv') => Promise<string | null>;
  /** Opens a folder in the file manager; resolves with an error text, '' when it worked. */
  openPath?: (path: string) => Promise<string>;
  /** How often a running mirror's progress is sent at most (ms); default 250. */
  progressIntervalMs?: number;
  /** How often the mirrors' sync schedules are looked at (ms); default a minute. */
  scheduleCheckMs?: number;
  /** The clock of the sync schedules (tests). */
  now?: () => number;
  version: string;
  log?: ErrorLogger;
  /**
   * Where each mirror's credentials are kept between runs, for syncs, audits and applied notifications alike (the
   * desktop app: a file whose values are sealed with the OS keychain through safeStorage, handed in by
   * src-main/electron; rsdesk serve: the same file unsealed, mode 600). Without one they last a run.
   */
  mirrorSecrets?: SecretStore;
  /** The live side (callback server, subscriptions): where its settings are kept, and a port for this run (tests: 0). */
  live?: { dataDir: string | null; port?: number; listenRetryMs?: number };
}

export interface Service {
  dispatch: Dispatch;
  events: EventHub;
  /** Starts the callback server and takes up the subscriptions (adapters call it once they are up). */
  startLive(): Promise<void>;
  /** Cancels running work, closes the HTTP client and the store. */
  close(): Promise<void>;
}

/** Why discovery found nothing: its own error findings say it best; else what it tried. */
function nothingFound(result: DiscoveryResult): string {
  const errors = result.findings.filter((f) => f.severity === 'error').map((f) => f.message);
  if (errors.length > 0) return errors.join(' ');
  const tried = result.routes.map((step) => `${step.route} ${step.url}: ${step.message}`);
  return `No ResourceSync Source found at ${result.start}.${tried.length > 0 ? ` Tried ${tried.join('; ')}.` : ''}`;
}

/** The pasted URL's own step (discovery fetches it first): a document, and whether the reader refused it. */
function pastedDocument(url: string, discovery: DiscoveryResult): AddSourceResult['pasted'] {
  const step = discovery.routes.find((s) => s.route === 'document' && s.url === url);
  return { url, capability: step?.found ? (step.capability ?? null) : null, refused: step?.refused ?? null };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

export function createService(deps: ServiceDeps): Service {
  const { store } = deps;
  const events = new EventHub();
  // Credentials kept per Source origin, beside the mirrors' secrets (the same store, sealed alike).
  const signIns = new SourceSignIns(deps.mirrorSecrets);
  const userAgent = `ResourceSync-Desktop/${deps.version}`;
  // The browser signs in to a Source with what is kept for its origin (a sign-in, else a mirror's own credentials),
  // asked per request (mirrors is made just below; nothing is fetched before then).
  const http = new HttpHolder(store.settings.get(), userAgent, (origin) => mirrors.sourceHeadersFor(origin));
  // One memory of refused documents for discovery and documents alike.
  const refusals = new RefusalMemory();
  const documents = new DocumentService({ store, http, events, refusals });
  const checks = new CheckService({ http, events });
  const mirrors: MirrorService = new MirrorService({
    store,
    events,
    userAgent: `ResourceSync-Desktop/${deps.version} (mirror)`,
    chooseFolder: deps.chooseFolder,
    chooseSaveFile: deps.chooseSaveFile,
    openPath: deps.openPath,
    progressIntervalMs: deps.progressIntervalMs,
    scheduleCheckMs: deps.scheduleCheckMs,
    now: deps.now,
    secretStore: deps.mirrorSecrets,
    signIns,
  });
  const abort = new AbortController();

  /** A Source's 401 or 403 as a plain 'sign-in' error naming the origin to sign in to. */
  const unauthorized = (error: unknown): unknown =>
    asUnauthorized(
      error,
      (origin) => mirrors.sourceHeadersFor(origin) !== null,
      (origin) => settingsTokenFor(store.settings.get(), origin) !== null,
      unboundToken(store.settings.get()),
    );
  const signedInOr = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw unauthorized(error);
    }
  };
  const trySignIn = (url: string, fields: { user?: string; password?: string; token?: string }, signal: AbortSignal) =>
    signIn(url, credentialsOf(fields), { signIns, timeoutMs: store.settings.get().timeoutMs, userAgent, signal });
  const running = new Set<Promise<unknown>>();

  // Discovery runs are tracked so close() can wait for them to let go of the HTTP client.
  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    void work.finally(() => running.delete(work)).catch(() => undefined);
    return work;
  };

  const discoveries = new DiscoveryRuns(abort.signal);
  const live = new LiveService({
    dataDir: deps.live?.dataDir ?? null,
    port: deps.live ? deps.live.port : 0,
    listenRetryMs: deps.live?.listenRetryMs,
    send: (batch) => events.emit('live.events', batch),
    capabilityLists: () => store.sources.list().flatMap((s) => s.capabilityListUrls),
    secretStore: deps.mirrorSecrets,
    // Read for each batch: a token set in Settings after subscribing is used by the next batch, as by the next sync.
    givenCredentials: (settings) => givenByApp(settings, settingsTokenFor(store.settings.get(), settings?.origin ?? null)),
  });

  /** url: already through normalizeStartUrl, so bad input was refused as invalid-arguments before any request. */
  const discoverWith = (url: string, runId: string, signal: AbortSignal): Promise<DiscoveryResult> =>
    http.use((client) =>
      discover(url, {
        http: client,
        signal,
        refusals,
        onStep: (step) => events.emit('discovery.step', { runId, step }),
        onFetch: (fetching) => events.emit('discovery.fetching', { runId, url: fetching }),
      }),
    );

  const addSource = async (url: string, runId: string, signal: AbortSignal, fields?: { user?: string; password?: string; token?: string }): Promise<AddSourceResult> => {
    // Credentials given up front are tried and kept first, so discovery already signs in with them.
    if (fields) await trySignIn(url, fields, signal);
    const discovery = await discoverWith(url, runId, signal);
    signal.throwIfAborted();
    if (discovery.sourceDescription === null && discovery.capabilityLists.length === 0) {
      // Nothing found because the Source would not let us in: say so, and for which origin, so the UI asks for a sign-in.
      const locked = discovery.routes.find((step) => step.status !== undefined && SIGN_IN_STATUSES.has(step.status));
      if (locked) throw unauthorized(new HttpStatusError(locked.status!, '', locked.url));
      throw new NotFoundError(nothingFound(discovery));
    }
    const pasted = pastedDocument(url, discovery);
    // The same start URL up to a trailing slash is the same Source, whatever discovery found this time.
    const same = store.sources.list().find((saved) => sameStartUrl(saved.startUrl, url));
    if (same) return { source: same, created: false, discovery, pasted };
    const { source, created } = store.sources.add({
      name: hostOf(url),
      startUrl: url,
      sourceDescriptionUrl: discovery.sourceDescription,
      capabilityListUrls: discovery.capabilityLists.map((list) => list.url),
    });
    if (created) events.emit('sources.changed', { sources: store.sources.list() });
    return { source, created, discovery, pasted };
  };

  const handlers: Handlers = {
    'app.info': () => ({
      name: 'ResourceSync Desktop',
      version: deps.version,
      adapter: deps.adapter,
      platform: process.platform,
      secrets: deps.mirrorSecrets ? { sealed: deps.mirrorSecrets.sealed, description: deps.mirrorSecrets.description } : null,
    }),

    'sources.list': () => store.sources.list(),

    'sources.add': ({ url, runId, signIn: fields }) => {
      const startUrl = normalizeStartUrl(url);
      return track(discoveries.run(runId, (signal) => addSource(startUrl, runId, signal, fields)));
    },

    'sources.signIn': ({ url, user, password, token }) => track(trySignIn(normalizeStartUrl(url), { user, password, token }, abort.signal)),

    'sources.signIns': () => signIns.list(),

    'sources.signOut': ({ url }) => {
      const origin = new URL(normalizeStartUrl(url)).origin;
      const forgotten = signIns.shown(origin);
      signIns.delete(origin);
      return { origin, forgotten };
    },

    'sources.remove': ({ id }) => {
      if (!store.sources.remove(id)) throw new NotFoundError('This Source is no longer saved');
      const sources = store.sources.list();
      events.emit('sources.changed', { sources });
      return sources;
    },

    'sources.restore': ({ id }) => {
      const source = store.sources.restore(id);
      if (source === null) throw new NotFoundError('This Source can no longer be restored (it was added again, or the app was restarted)');
      const sources = store.sources.list();
      events.emit('sources.changed', { sources });
      return { source, sources };
    },

    'discovery.run': ({ url, runId }) => {
      const startUrl = normalizeStartUrl(url);
      return track(discoveries.run(runId, (signal) => discoverWith(startUrl, runId, signal)));
    },

    'discovery.cancel': ({ runId }) => discoveries.cancel(runId),

    'documents.summary': ({ url, refresh }) => signedInOr(() => documents.summary(url, refresh ?? false)),

    'documents.entries': ({ url, offset, limit, uri, change, sort, descending }) =>
      signedInOr(() => documents.entries(url, { offset, limit, uri, change, sort, descending })),

    'documents.entry': ({ url, index }) => signedInOr(() => documents.entry(url, index)),

    'documents.raw': ({ url, limit }) => signedInOr(() => documents.raw(url, limit)),

    'settings.get': () => store.settings.get(),

    'settings.set': (patch) => {
      const tokenOrigin = patch.tokenOrigin ? tokenOriginOf(patch.tokenOrigin) : patch.tokenOrigin;
      const settings = store.settings.set({ ...patch, tokenOrigin });
      http.rebuild(settings);
      return settings;
    },

    'shell.openExternal': async ({ url }) => {
      const { protocol } = new URL(url);
      if (protocol !== 'http:' && protocol !== 'https:') throw new InvalidArgumentsError('Only http(s) links open');
      // In a browser (http adapter) the page opens the link itself.
      if (deps.adapter === 'http' || !deps.openExternal) return { opened: false };
      await deps.openExternal(url);
      return { opened: true };
    },

    'check.run': ({ url, runId, maxDocuments }) => checks.run(url, runId, maxDocuments),
    'check.cancel': ({ runId }) => checks.cancel(runId),

    'mirrors.list': () => mirrors.list(),
    'mirrors.get': ({ path }) => mirrors.get(path),
    'mirrors.create': (args) => mirrors.create(args),
    'mirrors.update': (args) => mirrors.update(args),
    'mirrors.setCredentials': ({ path, user, password }) =>
      mirrors.setCredentials(path, user !== null && password !== null ? { user, password } : null),
    'mirrors.setToken': ({ path, token }) => mirrors.setToken(path, token),
    'mirrors.setHeaders': ({ path, headers }) => mirrors.setHeaders(path, headers),
    'mirrors.forget': ({ path }) => mirrors.forget(path),
    'mirrors.chooseFolder': () => mirrors.chooseFolder(),
    'mirrors.openFolder': ({ path }) => mirrors.openFolder(path),
    'runs.start': ({ path, mode, dryRun, allowMassDelete }) => mirrors.start(path, mode, dryRun, allowMassDelete),
    'runs.pause': ({ path }) => mirrors.pause(path),
    'runs.resume': ({ path }) => mirrors.resume(path),
    'runs.cancel': ({ path }) => mirrors.cancel(path),
    'runs.list': ({ path }) => mirrors.runs(path),
    'runs.failures': ({ path, runId }) => mirrors.failures(path, runId),
    'runs.retry': ({ path, runId, uris }) => mirrors.retry(path, runId, uris),
    'runs.retryStanding': ({ path }) => mirrors.retryStanding(path),
    'audit.start': ({ path, rehash }) => mirrors.audit(path, rehash),
    'audit.report': ({ path }) => mirrors.auditReport(path),
    'audit.export': (args) => mirrors.exportAudit(args),
    'audit.exportCancel': ({ path }) => mirrors.cancelExport(path),
    'live.status': () => live.status(),
    'live.settings.set': (settings) => live.setSettings(settings),
    'live.selftest': () => live.selfTest(),
    'live.subscriptions': () => live.subscriptions(),
    'live.subscribe': (input) => live.subscribe(input),
    'live.unsubscribe': ({ folder, id }) => live.unsubscribe(folder, id),
    'live.recent': () => live.recent(),
  };

  let closing: Promise<void> | null = null;
  return {
    dispatch: createDispatch(handlers, { log: deps.log }),
    events,
    startLive: () => live.start(),
    close() {
      closing ??= (async () => {
        abort.abort();
        await Promise.allSettled([documents.close(), checks.close(), mirrors.close(), live.close(), ...running]);
        await http.close();
        store.close();
      })();
      return closing;
    },
  };
}
