// Every failure to get a usable response becomes a NetworkError with a stable code and a sentence a person can read.
import { HTTP_REASONS } from '../../contract/http-reasons.ts';
import { clip } from '../clip.ts';

/** Largest response headers read (Node's own default), shared with the client. */
export const MAX_HEADER_BYTES = 16 * 1024;

export type NetworkErrorCode =
  | 'timeout'
  /** The whole fetch took longer than its overall deadline (a trickling or endless body). */
  | 'deadline'
  /** The response's headers are larger than the client accepts. */
  | 'headers-too-large'
  /** What came back is not HTTP. */
  | 'protocol'
  | 'too-many-redirects'
  | 'bad-redirect'
  | 'refused'
  | 'reset'
  | 'dns'
  | 'tls'
  | 'too-large'
  | 'bad-url'
  | 'http-status'
  | 'aborted'
  /** A proxy would not pass the request on (it asked for credentials, or would not open a tunnel). */
  | 'proxy'
  | 'network';

export class NetworkError extends Error {
  code: NetworkErrorCode;
  url: string;
  constructor(code: NetworkErrorCode, message: string, url: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NetworkError';
    this.code = code;
    this.url = url;
  }
}

/** A response arrived but its status says the document is not there (non-2xx). */
export class HttpStatusError extends NetworkError {
  status: number;
  statusText: string;
  constructor(status: number, statusText: string, url: string) {
    super('http-status', `HTTP ${status}${statusText ? ` ${statusText}` : ''} for ${url}`, url);
    this.name = 'HttpStatusError';
    this.status = status;
    this.statusText = statusText;
  }
}

/** A proxy answered for the Source: it wants credentials (407), or would not reach the Source (403, 502…). */
export class ProxyError extends NetworkError {
  status: number;
  constructor(status: number, message: string, url: string, options?: { cause?: unknown }) {
    super('proxy', message, url, options);
    this.name = 'ProxyError';
    this.status = status;
  }
}

export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : Number(s.toFixed(1))} s`;
}

/** "45 s", "5 min", "1 min 30 s", "3 h 20 min", "12 days" (a Retry-After can ask for years). */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return formatSeconds(ms);
  if (ms >= 2 * 86_400_000) return `${Math.round(ms / 86_400_000).toLocaleString('en')} days`;
  if (ms >= 3_600_000) {
    const hours = Math.floor(ms / 3_600_000);
    const minutes = Math.floor((ms % 3_600_000) / 60_000);
    return minutes === 0 ? `${hours} h` : `${hours} h ${minutes} min`;
  }
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds === 0 ? `${minutes} min` : `${minutes} min ${seconds} s`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < 1024 * 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;
  return `${Number((bytes / 1024 / 1024 / 1024).toFixed(1))} GiB`;
}

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

function errorCode(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return '';
}

/** Maps undici / socket / abort errors to a NetworkError. `phase` says what we were waiting for. */
export function toNetworkError(
  err: unknown,
  url: string,
  timeoutMs: number,
  phase: 'response' | 'body' = 'response',
  /** The proxy the request went through (host:port), if any: a connection that could not be made was to it. */
  via: string | null = null,
): NetworkError {
  if (err instanceof NetworkError) return err;
  // undici wraps the real cause of a socket failure in `cause`.
  const cause = err && typeof err === 'object' && 'cause' in err ? err.cause : undefined;
  const code = errorCode(err) || errorCode(cause);
  const name = err instanceof Error ? err.name : '';
  const detail = err instanceof Error ? err.message : String(err);
  const host = safeHost(url);
  const proxyStatus = proxyRefusal(detail);
  if (proxyStatus !== null) {
    // undici reports a proxy's refusal of a tunnel as an abort, which read as "Cancelled" and ended a discovery as if
    // the person had cancelled it.
    const proxy = via === null ? 'The proxy' : `The proxy ${via}`;
    const words = `HTTP ${proxyStatus}${HTTP_REASONS[proxyStatus] ? ` ${HTTP_REASONS[proxyStatus]}` : ''}`;
    const message =
      proxyStatus === 407
        ? `${proxy} asks for a user name and password, or refused the ones given (${words}), for ${url}. They are given in the HTTP_PROXY and HTTPS_PROXY environment variables (http://USER:PASSWORD@HOST:PORT), read when the proxy setting is env, the default.`
        : `${proxy} did not pass the request on to ${host} (it answered ${words}), for ${url}`;
    return new ProxyError(proxyStatus, message, url, { cause: err });
  }
  if (via !== null) {
    // Through a proxy, the only connection this client makes is to the proxy: blaming the Source would send a person
    // looking at the wrong machine.
    switch (code) {
      case 'UND_ERR_CONNECT_TIMEOUT':
        return new NetworkError('timeout', `Timed out after ${formatSeconds(timeoutMs)} connecting to the proxy ${via} (for ${url})`, url, { cause: err });
      case 'ECONNREFUSED':
        return new NetworkError('refused', `Connection refused by the proxy ${via} (for ${url})`, url, { cause: err });
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
      case 'EAI_NONAME':
        return new NetworkError('dns', `Proxy host not found: ${via} (for ${url})`, url, { cause: err });
    }
  }
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'ETIMEDOUT':
      return new NetworkError('timeout', `Timed out after ${formatSeconds(timeoutMs)} waiting for ${url}`, url, { cause: err });
    case 'UND_ERR_BODY_TIMEOUT':
      return new NetworkError(
        'timeout',
        `Timed out after ${formatSeconds(timeoutMs)} waiting for more data from ${url}`,
        url,
        { cause: err },
      );
    case 'ECONNREFUSED':
      return new NetworkError('refused', `Connection refused by ${host} (${url})`, url, { cause: err });
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return new NetworkError(
        'reset',
        phase === 'body' ? `Connection closed while reading ${url}` : `Connection closed by ${host} before it answered (${url})`,
        url,
        { cause: err },
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new NetworkError('dns', `Host not found: ${host} (${url})`, url, { cause: err });
    case 'UND_ERR_HEADERS_OVERFLOW':
      return new NetworkError(
        'headers-too-large',
        `${host} answered with response headers larger than ${formatBytes(MAX_HEADER_BYTES)}; not read (${url})`,
        url,
        { cause: err },
      );
    case 'UND_ERR_ABORTED':
    case 'ABORT_ERR':
      return new NetworkError('aborted', `Cancelled: ${url}`, url, { cause: err });
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return new NetworkError('network', `${host} sent a body of another length than its Content-Length header says (${url})`, url, { cause: err });
  }
  if (name === 'HTTPParserError' || code.startsWith('HPE_')) {
    return new NetworkError('protocol', `${host} did not answer with valid HTTP (${url})`, url, { cause: err });
  }
  if (name === 'AbortError') return new NetworkError('aborted', `Cancelled: ${url}`, url, { cause: err });
  if (TLS_CODES.has(code) || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL')) {
    return new NetworkError('tls', `Secure connection to ${host} failed: ${detail} (${url})`, url, { cause: err });
  }
  return new NetworkError('network', `Network error for ${url}: ${clip(detail, 200)}`, url, { cause: err });
}

/** The status of a proxy's refusal, as undici words it (a tunnel not opened; a 407 to a request sent through it). */
function proxyRefusal(detail: string): number | null {
  if (detail === 'Proxy Authentication Required (407)') return 407;
  const tunnel = /^Proxy response \((\d{3})\) !== 200 when HTTP Tunneling$/.exec(detail);
  return tunnel ? Number(tunnel[1]) : null;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * A network error's message for a place that already shows the URL beside it (a discovery step): the same words
 * without the URL, which would otherwise be read twice on one line. A message that words the URL otherwise (a
 * clipped one) is returned as it is.
 */
export function messageWithoutUrl(message: string, url: string): string {
  if (url === '' || !message.includes(url)) return message;
  let text = message
    .split(` (${url})`)
    .join('')
    .replace(`waiting for more data from ${url}`, 'waiting for more data')
    .replace(`waiting for ${url}`, 'waiting for an answer')
    .replace(`while reading ${url}`, 'while the body was read')
    .replace(`while fetching ${url}`, 'while fetching it')
    .replace(`Network error for ${url}: `, 'Network error: ')
    .replace(`Cancelled: ${url}`, 'Cancelled');
  if (text.startsWith(`${url} `)) text = `It ${text.slice(url.length + 1)}`;
  return text.includes(url) ? message : text;
}

/**
 * An `onInfo` for undici's request(). undici restarts its headers timer at each informational response (103 Early
 * Hints…), so a server sending them for ever held a request until the overall deadline (10 min) whatever the timeout.
 * The first one starts a clock of its own that they do not reset: past `timeoutMs`, the next one ends the request (and
 * should they stop, undici's own timer ends it as before).
 */
export function informationalLimit(url: string, timeoutMs: number): (info: { statusCode: number }) => void {
  let first = 0;
  return (info) => {
    const now = Date.now();
    if (first === 0) first = now;
    else if (now - first > timeoutMs) {
      // Thrown inside undici's parser, which ends the connection with this error and rejects the request with it.
      throw new NetworkError(
        'timeout',
        `Timed out after ${formatSeconds(timeoutMs)} waiting for ${url}: it sent only informational responses (${info.statusCode}), never its answer`,
        url,
      );
    }
  };
}
