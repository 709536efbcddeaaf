// Between what the form shows (a token string, seconds as typed) and what the engine stores (Settings).
import { TIMEOUT_RANGE } from '../../src-main/contract/limits.ts';
import type { Settings } from '../../src-main/contract/types.ts';

export interface FormValues {
  token: string;
  /** The Source the token is for, as typed (a URL or a host name; the engine keeps its origin). */
  origin: string;
  /** As typed in the number field; the engine checks the range. */
  seconds: string;
}

export type Field = 'token' | 'origin' | 'timeout';

export function toValues(settings: Settings): FormValues {
  return { token: settings.bearerToken ?? '', origin: settings.tokenOrigin ?? '', seconds: String(settings.timeoutMs / 1000) };
}

/** A bearer token has no spaces (RFC 6750 b64token), so surrounding whitespace is a paste accident. */
function tokenOf(values: FormValues): string | null {
  const token = values.token.trim();
  return token === '' ? null : token;
}

/**
 * The patch for `settings.set`, or why there is none. Only a field that is not a number at all is caught here;
 * the range (TIMEOUT_RANGE) and the token's length are the engine's to judge, and its message is shown.
 */
export function toPatch(values: FormValues): { patch: Settings } | { field: Field; message: string } {
  const text = values.seconds.trim();
  const seconds = Number(text);
  if (text === '' || !Number.isFinite(seconds)) {
    return { field: 'timeout', message: `Enter the timeout as ${TIMEOUT_RANGE}.` };
  }
  const token = tokenOf(values);
  const origin = values.origin.trim();
  // The token goes to one Source only; without it named, it would be kept and sent nowhere.
  if (token !== null && origin === '') return { field: 'origin', message: ORIGIN_NEEDED };
  return { patch: { bearerToken: token, tokenOrigin: token === null ? null : origin, timeoutMs: Math.round(seconds * 1000) } };
}

export const ORIGIN_NEEDED = 'Say which Source the token is for: give its address (for example https://example.org). The token is sent there and nowhere else.';

export function unchanged(values: FormValues, settings: Settings): boolean {
  const origin = tokenOf(values) === null ? null : values.origin.trim() || null;
  return tokenOf(values) === settings.bearerToken && origin === settings.tokenOrigin && Number(values.seconds.trim()) * 1000 === settings.timeoutMs;
}

/** The form field of the argument an engine error names (its `field`). */
export function fieldOf(argument: string | null): Field | null {
  if (argument === 'timeoutMs') return 'timeout';
  if (argument === 'bearerToken') return 'token';
  if (argument === 'tokenOrigin') return 'origin';
  return null;
}
