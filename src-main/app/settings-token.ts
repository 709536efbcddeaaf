// The bearer token of Settings belongs to one Source: it is sent to the origin the person named for it and to no
// other. It used to go to every host the app reached (an up or index link to another host, a redirect's target, a
// document opened in the browser, a link followed, every mirror's Source); a token kept from then has no origin and
// is sent nowhere until the person names its Source in Settings.
import type { Settings } from '../contract/types.ts';
import { normalizeStartUrl } from '../engine/discovery/discover.ts';
import { bearerFor, type SourceHeaders } from '../engine/http/index.ts';
import type { Binding } from '../engine/mirror/state.ts';
import { normalizeStartUrl as personsUrl } from './start-url.ts';

type TokenSettings = Pick<Settings, 'bearerToken' | 'tokenOrigin'>;

/** The Settings token if it is for `origin`, else null. */
export function settingsTokenFor(settings: TokenSettings, origin: string | null): string | null {
  if (!settings.bearerToken || settings.tokenOrigin === null || origin === null) return null;
  return settings.tokenOrigin === origin ? settings.bearerToken : null;
}

/** True when Settings keeps a token named for no Source (kept by an earlier version): it is sent nowhere. */
export function unboundToken(settings: TokenSettings): boolean {
  return !!settings.bearerToken && settings.tokenOrigin === null;
}

/** The Settings token as the headers of its own origin, for a request bound for `origin`; null for any other. */
export function settingsTokenHeaders(settings: TokenSettings, origin: string): SourceHeaders | null {
  return bearerFor(origin, settingsTokenFor(settings, origin));
}

/** The origin a mirror's credentials go to (as its sync decides it), or null when its binding cannot say. */
export function mirrorOrigin(binding: Binding | null | undefined): string | null {
  if (!binding) return null;
  try {
    return binding.settings?.origin ?? new URL(binding.capabilityListUrl ?? normalizeStartUrl(binding.url)).origin;
  } catch {
    return null;
  }
}

/**
 * The origin of the Source the person names for the token: any URL of it, or its host name. Throws
 * InvalidArgumentsError, in plain words, for anything else.
 */
export function tokenOriginOf(input: string): string {
  return new URL(personsUrl(input, 'in the token field')).origin;
}
