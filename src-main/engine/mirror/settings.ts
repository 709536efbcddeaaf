// Per-Source settings of a mirror, kept in its binding so a reopened mirror (by the app or `rsdesk sync --dest DIR`)
// keeps them: authentication (bearer token or HTTP basic), extra headers, concurrency, delay, timeout, proxy. Every
// credential and extra header goes to the Source's origin only — never to another host, whether a redirect, a mirror
// location (`rel="duplicate"`) or an index part names it. The secret itself is not in the binding: it is kept in a
// SecretStore under the mirror's key (see secrets.ts), and the binding says only which scheme the Source wants.
import type { SourceHeaders } from '../http/client.ts';
import { parseProxySetting, type ProxySetting } from '../http/dispatcher.ts';
import { MIRROR_LIMITS, REFUSAL_SECONDS, TIMEOUT_SECONDS } from '../../contract/limits.ts';
import type { SecretStore } from './secrets.ts';
// The same rules as the app's Access tab: hop-by-hop and transport headers, and Authorization, cannot be set.
import { FORBIDDEN_HEADERS, HEADER_LIMITS, HEADER_NAME, headerValueProblem, MIRROR_OWN_HEADERS } from '../../contract/headers.ts';

/** `own` (the app): a token given to this mirror itself, which the Settings token does not replace. */
export type Credentials = { scheme: 'bearer'; token: string; own?: boolean } | { scheme: 'basic'; user: string; password: string };

export interface SourceSettings {
  /** The origin (scheme, host, port) credentials and headers are sent to. */
  origin: string;
  /** Which scheme the Source wants; the secret is in the SecretStore under `secretKey(binding id)`. */
  auth: { scheme: 'bearer'; own?: boolean } | { scheme: 'basic'; user: string } | null;
  /** Extra request headers (lower-case names), sent to the Source's origin only. */
  headers: Record<string, string>;
  /** Connections per host; null = the default (8). */
  concurrency: number | null;
  /** Pause after each request, per connection; null = none. */
  delayMs: number | null;
  /** Idle timeout of one request; null = the default (30 s). */
  timeoutMs: number | null;
  proxy: ProxySetting;
  /**
   * How long the Source may refuse every request of a run (429, 503… or no answer) before the run pauses
   * (refusal-watch.ts); null or absent (mirrors made before it) = the default (30 min).
   */
  refusalLimitMs?: number | null;
}

/** What a caller may change; absent fields keep the mirror's current value. */
export type SettingsChange = Partial<Pick<SourceSettings, 'headers' | 'concurrency' | 'delayMs' | 'timeoutMs' | 'proxy' | 'refusalLimitMs'>>;

export const DEFAULT_SETTINGS: Omit<SourceSettings, 'origin'> = {
  auth: null,
  headers: {},
  concurrency: null,
  delayMs: null,
  timeoutMs: null,
  proxy: 'env',
};


export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** Parses `Name: value` as people write it on a command line. */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).trim().toLowerCase();
  if (!HEADER_NAME.test(name)) {
    // The value may be a secret (an API key): the header is named by the word before its value, never quoted whole;
    // a single word may be a value given alone, so it is not shown either.
    const first = /^([^\s:]+)\s+\S/.exec(text.trim())?.[1] ?? '';
    throw new SettingsError(
      first !== '' && HEADER_NAME.test(first.toLowerCase())
        ? `The ${first} header is not written "Name: value" (a colon after the name); its value is not shown here`
        : 'A header is written "Name: value" (a colon after the name); this one is not, and is not shown here',
    );
  }
  if (FORBIDDEN_HEADERS.has(name)) {
    throw new SettingsError(
      `The ${name} header cannot be set${name === 'authorization' ? ' this way; use --token or --basic' : MIRROR_OWN_HEADERS.has(name) ? ': the mirror sets it itself, request by request' : ''}`,
    );
  }
  const value = text.slice(colon + 1).trim();
  const problem = headerValueProblem(value);
  if (problem !== null) throw new SettingsError(`The value of the ${name} header ${problem}`);
  return [name, value];
}

/**
 * Parses every `--header` of a command line by the rules of the app's Access tab: each name once (a second one
 * silently replaced the first), at most HEADER_LIMITS.count of them, names and values no longer than its limits.
 */
export function parseHeaders(texts: string[]): Record<string, string> {
  if (texts.length > HEADER_LIMITS.count) throw new SettingsError(`At most ${HEADER_LIMITS.count} extra headers can be given`);
  const headers: Record<string, string> = {};
  for (const text of texts) {
    const [name, value] = parseHeader(text);
    if (name.length > HEADER_LIMITS.name) throw new SettingsError(`A header name is too long (at most ${HEADER_LIMITS.name} characters)`);
    if (value.length > HEADER_LIMITS.value) throw new SettingsError(`The value of the ${name} header is too long (at most ${HEADER_LIMITS.value.toLocaleString('en')} characters)`);
    if (Object.hasOwn(headers, name)) throw new SettingsError(`The ${name} header is given twice: give each header once`);
    headers[name] = value;
  }
  return headers;
}

/** Parses `USER:PASSWORD` (the password may contain colons; the user may not, as RFC 7617 says). */
export function parseBasic(text: string): Credentials {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new SettingsError('Basic credentials are written USER:PASSWORD');
  return { scheme: 'basic', user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** How to give credentials again, said when a mirror needs some that this computer does not keep. */
export interface AskAgain {
  bearer: string;
  basic: string;
}

/** The CLI's words (the app passes its own). */
export const CLI_ASK_AGAIN: AskAgain = { bearer: 'give it again with --token (or RSDESK_TOKEN)', basic: 'give it again with --basic USER:PASSWORD (or RSDESK_BASIC)' };

export function secretKey(mirrorId: string): string {
  return `mirror:${mirrorId}`;
}

/** The value of the Authorization header for these credentials. */
export function authorizationOf(c: Credentials): string {
  return c.scheme === 'bearer' ? `Bearer ${c.token}` : `Basic ${Buffer.from(`${c.user}:${c.password}`, 'utf8').toString('base64')}`;
}

/**
 * What of a binding's settings is not what rsdesk and the app ever keep, in words: the folder's state is a file that
 * can be edited by hand, damaged, or come from elsewhere. Such a value is taken as the default (mergeSettings):
 * concurrency "eight" stalled every run for good, a timeout of 0 failed every request, a proxy that is no URL made
 * every run fail with "Invalid URL", a header with a line break every request.
 */
export function keptSettingsProblems(kept: SourceSettings | undefined): string[] {
  if (kept === undefined) return [];
  const k = kept as unknown as Record<string, unknown>;
  const problems: string[] = [];
  const whole = (v: unknown, min: number, max: number) => v === null || v === undefined || (Number.isInteger(v) && (v as number) >= min && (v as number) <= max);
  if (!whole(k.concurrency, MIRROR_LIMITS.concurrency.min, MIRROR_LIMITS.concurrency.max)) problems.push('connections');
  if (!whole(k.delayMs, 0, MIRROR_LIMITS.delaySeconds.max * 1000)) problems.push('pause between requests');
  if (!whole(k.timeoutMs, 1, TIMEOUT_SECONDS.max * 1000)) problems.push('timeout');
  if (!whole(k.refusalLimitMs, 1, REFUSAL_SECONDS.max * 1000)) problems.push('pause after refusals');
  if (k.proxy !== undefined && !validProxy(k.proxy)) problems.push('proxy');
  if (k.headers !== undefined && !sameHeaders(validHeaders(k.headers), k.headers)) problems.push('extra headers');
  return problems;
}

function validProxy(proxy: unknown): boolean {
  if (typeof proxy !== 'string') return false;
  try {
    parseProxySetting(proxy);
    return true;
  } catch {
    return false;
  }
}

/**
 * The headers among `headers` that may be kept: a header refused since it was kept (Range, once allowed) goes alone,
 * not with the others, which may carry an API key the Source wants.
 */
function validHeaders(headers: unknown): Record<string, string> {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return {};
  return Object.fromEntries(
    Object.entries(headers).filter(
      ([name, value]) => HEADER_NAME.test(name) && !FORBIDDEN_HEADERS.has(name.toLowerCase()) && typeof value === 'string' && headerValueProblem(value) === null,
    ),
  );
}

function sameHeaders(valid: Record<string, string>, kept: unknown): boolean {
  return kept !== null && typeof kept === 'object' && !Array.isArray(kept) && Object.keys(valid).length === Object.keys(kept).length;
}

/** The binding's settings with each value keptSettingsProblems names replaced by its default. */
function sane(kept: SourceSettings): SourceSettings {
  const problems = keptSettingsProblems(kept);
  if (problems.length === 0) return kept;
  const fixed = { ...kept };
  if (problems.includes('connections')) fixed.concurrency = null;
  if (problems.includes('pause between requests')) fixed.delayMs = null;
  if (problems.includes('timeout')) fixed.timeoutMs = null;
  if (problems.includes('pause after refusals')) fixed.refusalLimitMs = null;
  if (problems.includes('proxy')) fixed.proxy = DEFAULT_SETTINGS.proxy;
  if (problems.includes('extra headers')) fixed.headers = validHeaders(kept.headers);
  return fixed;
}

/** The settings after a change, with the origin and the scheme of newly given credentials. */
export function mergeSettings(old: SourceSettings | undefined, origin: string, change: SettingsChange = {}, credentials?: Credentials | null): SourceSettings {
  // Credentials and extra headers belong to the origin they were given for: a folder pointed at another origin (a
  // typo, another port, "localhost" for "127.0.0.1") must not send them there, not even to discover what it is.
  const checked = old === undefined ? undefined : sane(old);
  const kept = checked !== undefined && checked.origin !== origin ? { ...checked, auth: null, headers: {} } : checked;
  const base: SourceSettings = { ...DEFAULT_SETTINGS, ...kept, origin };
  for (const [k, v] of Object.entries(change)) if (v !== undefined) (base as unknown as Record<string, unknown>)[k] = v;
  if (credentials) base.auth = credentials.scheme === 'bearer' ? { scheme: 'bearer', ...(credentials.own ? { own: true } : {}) } : { scheme: 'basic', user: credentials.user };
  else if (credentials === null) base.auth = null;
  return base;
}

/**
 * The credentials to use: those given now (kept in `store` for next time, `onNote` says where), else the ones kept
 * for this mirror. A mirror that needs credentials nobody has here fails with what to do.
 */
export function resolveCredentials(
  settings: SourceSettings,
  mirrorId: string,
  given: Credentials | null | undefined,
  store: SecretStore | undefined,
  onNote?: (note: string) => void,
  askAgain: AskAgain = CLI_ASK_AGAIN,
): Credentials | null {
  const key = secretKey(mirrorId);
  if (given) {
    const secret = given.scheme === 'bearer' ? given.token : given.password;
    if (store && store.get(key) !== secret) {
      store.set(key, secret);
      onNote?.(`The ${given.scheme === 'bearer' ? 'token' : 'password'} for ${settings.origin} is kept ${store.description}, not in the mirror folder.`);
    }
    if (!store) onNote?.(`The ${given.scheme === 'bearer' ? 'token' : 'password'} is not kept anywhere: give it again on the next run.`);
    return given;
  }
  if (given === null) {
    store?.delete(key);
    return null;
  }
  if (!settings.auth) return null;
  const secret = store?.get(key) ?? null;
  if (secret === null) {
    throw new SettingsError(
      `This mirror sends ${settings.auth.scheme === 'bearer' ? 'a bearer token' : `HTTP basic credentials (user ${settings.auth.user})`} to ${settings.origin}, ` +
        `and none is kept on this computer; ${askAgain[settings.auth.scheme]}`,
    );
  }
  return settings.auth.scheme === 'bearer' ? { scheme: 'bearer', token: secret } : { scheme: 'basic', user: settings.auth.user, password: secret };
}

/** The headers for the Source's origin. */
export function sourceHeadersOf(settings: SourceSettings, credentials: Credentials | null): SourceHeaders {
  return { origin: settings.origin, authorization: credentials ? authorizationOf(credentials) : null, headers: settings.headers };
}

/** The client settings of a mirror that is already bound (audit, a reopened mirror): its settings and its credentials. */
export function accessOf(
  settings: SourceSettings | undefined,
  fallbackOrigin: string,
  mirrorId: string | undefined,
  given: Credentials | null | undefined,
  store: SecretStore | undefined,
  askAgain?: AskAgain,
): { settings: SourceSettings; credentials: Credentials | null } {
  const merged = mergeSettings(settings, settings?.origin ?? fallbackOrigin, {}, given);
  return { settings: merged, credentials: resolveCredentials(merged, mirrorId ?? '', given, mirrorId ? store : undefined, undefined, askAgain) };
}
