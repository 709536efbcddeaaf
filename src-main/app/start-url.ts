// What a person types as a start URL, made into an absolute http(s) URL before any request is made.
import { InvalidArgumentsError } from './errors.ts';

/** A bare host or path ("example.org/rs") gets https://; anything that is not http(s) is refused. */
export function normalizeStartUrl(input: string): string {
  const text = input.trim();
  const candidate = /^[a-z][a-z0-9+.-]*:/i.test(text) && !/^[^/:]+:\d+(\/|$)/.test(text) ? text : `https://${text}`;
  try {
    const url = new URL(candidate);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '') return url.href;
  } catch {
    // refused below
  }
  throw new InvalidArgumentsError(`Not an http(s) URL or host name: ${JSON.stringify(text.slice(0, 200))}`);
}
