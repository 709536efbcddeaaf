// Signing in to a Source: credentials given for an origin are tried on one URL of it before they are kept (so a
// mistyped password is said at once, and never kept), and a 401 or 403 from a Source becomes an UnauthorizedError
// that says, in plain words, whether credentials were sent and refused or none were given.
import type { SignInResult } from '../contract/types.ts';
import { Http, HttpStatusError, NetworkError } from '../engine/http/index.ts';
import { authorizationOf, type Credentials } from '../engine/mirror/settings.ts';
import { UnauthorizedError } from './errors.ts';
import type { SourceSignIns } from './source-sign-ins.ts';

export const SIGN_IN_STATUSES: ReadonlySet<number> = new Set([401, 403]);

/** What the arguments of sources.signIn / sources.add give: a user name and password, or a token. */
export function credentialsOf(fields: { user?: string; password?: string; token?: string }): Credentials {
  if (fields.token !== undefined) return { scheme: 'bearer', token: fields.token };
  return { scheme: 'basic', user: fields.user!, password: fields.password! };
}

function statusWords(status: number): string {
  return status === 401 ? 'HTTP 401 Unauthorized' : status === 403 ? 'HTTP 403 Forbidden' : `HTTP ${status}`;
}

function what(c: Credentials): string {
  return c.scheme === 'basic' ? `the user name ${JSON.stringify(c.user)} and its password` : 'the token';
}

/**
 * Asks `url` with `credentials` alone (not the Settings token, not what is kept); keeps them for its origin when the
 * Source does not answer 401 or 403. Any other answer (even 404) says nothing against the credentials.
 */
export async function signIn(
  url: string,
  credentials: Credentials,
  deps: { signIns: SourceSignIns; timeoutMs: number; userAgent: string; signal?: AbortSignal },
): Promise<SignInResult> {
  const origin = new URL(url).origin;
  if (!deps.signIns.available) throw new UnauthorizedError('This app has nowhere to keep credentials on this computer.', origin, false);
  const http = new Http({ sourceHeaders: { origin, authorization: authorizationOf(credentials) }, timeoutMs: deps.timeoutMs, userAgent: deps.userAgent });
  let status: number;
  try {
    const response = await http.get(url, { signal: deps.signal, accept: 'application/xml, text/xml;q=0.9, text/html;q=0.8, */*;q=0.5' });
    status = response.status;
    await response.discard();
  } catch (error) {
    if (error instanceof NetworkError && error.code !== 'aborted') {
      throw new NetworkError(error.code, `The sign-in could not be tried, so it was not kept: ${error.message}`, error.url);
    }
    throw error;
  } finally {
    await http.close();
  }
  if (SIGN_IN_STATUSES.has(status)) {
    const message =
      status === 401
        ? `${origin} refused ${what(credentials)} (${statusWords(status)}). Check them and try again; they were not kept.`
        : `${origin} does not let ${what(credentials)} read ${url} (${statusWords(status)}): this account may not have access to it. They were not kept.`;
    throw new UnauthorizedError(message, origin, true);
  }
  deps.signIns.set(origin, credentials);
  return { signIn: deps.signIns.shown(origin)!, checked: { url, status } };
}

/**
 * A 401 or 403 from a Source as an UnauthorizedError, in words that depend on what was sent: `sent` says whether
 * credentials kept for that origin went with the request, `settingsToken` whether the Settings token did (it goes to
 * its own origin only), `unboundToken` whether Settings keeps a token named for no Source (sent nowhere). Other
 * errors come back as they are.
 */
export function asUnauthorized(error: unknown, sent: (origin: string) => boolean, settingsToken: (origin: string) => boolean, unboundToken = false): unknown {
  if (!(error instanceof HttpStatusError) || !SIGN_IN_STATUSES.has(error.status)) return error;
  let origin: string;
  try {
    origin = new URL(error.url).origin;
  } catch {
    return error;
  }
  const status = statusWords(error.status);
  if (sent(origin)) {
    const message =
      error.status === 401
        ? `${origin} refused the sign-in kept for it (${status} for ${error.url}): the password or token may have changed. Sign in again.`
        : `${origin} does not let the sign-in kept for it read ${error.url} (${status}): this account may not have access to it.`;
    return new UnauthorizedError(message, origin, true);
  }
  if (settingsToken(origin)) {
    return new UnauthorizedError(`${origin} refused the bearer token of Settings (${status} for ${error.url}). Sign in to this Source with its own credentials.`, origin, true);
  }
  const message =
    error.status === 401
      ? `${origin} asks for a sign-in to read ${error.url} (${status}).`
      : `${origin} does not let anyone read ${error.url} without a sign-in (${status}).`;
  // A token an earlier version sent everywhere is now sent nowhere until its Source is named: the likely reason.
  const unbound = unboundToken ? ' The bearer token kept in Settings is sent to no Source until you name there the Source it is for.' : '';
  return new UnauthorizedError(message + unbound, origin, false);
}
