export { Http, bearerFor, parseHttpUrl, DEFAULT_MAX_REDIRECTS, DEFAULT_TIMEOUT_MS, DEFAULT_USER_AGENT } from './client.ts';
export type { GetInit, HttpOptions, HttpResponse, SourceHeaders } from './client.ts';
export { HttpStatusError, NetworkError } from './errors.ts';
export type { NetworkErrorCode } from './errors.ts';
export { parseLinkHeader, linksWithRel } from './link-header.ts';
export type { WebLink } from './link-header.ts';
export { peek } from './peek.ts';
export type { Peeked } from './peek.ts';
