// The connection pool every engine client uses, with the proxy setting applied. By default the environment decides,
// as curl and most tools do: HTTP_PROXY / HTTPS_PROXY (or their lower-case forms) name the proxies and NO_PROXY the
// hosts reached directly (no-proxy.ts). `none` ignores the environment; a URL names one proxy for all.
import { Agent, Dispatcher, Pool, ProxyAgent } from 'undici';
import { bypassed, parseNoProxy, type NoProxy } from './no-proxy.ts';
import { OriginGate } from './origin-gate.ts';
import { NetworkError } from './errors.ts';
import { clip } from '../clip.ts';
import { hideUserinfo } from './userinfo.ts';

/** `env` (default): the environment's proxies; `none`: direct; or an http(s) proxy URL. */
export type ProxySetting = 'env' | 'none' | string;

/** The proxy variables read from the environment (injectable for tests). */
export interface ProxyEnv {
  HTTP_PROXY?: string;
  HTTPS_PROXY?: string;
  NO_PROXY?: string;
  http_proxy?: string;
  https_proxy?: string;
  no_proxy?: string;
}

/** Checks a proxy setting as people write it; throws a plain sentence for anything else. */
export function parseProxySetting(value: string): ProxySetting {
  if (value === 'env' || value === 'none') return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new NetworkError('bad-url', `The proxy must be env, none or an http(s) URL, not ${clip(hideUserinfo(value))}`, hideUserinfo(value));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NetworkError('bad-url', `The proxy must be an http or https URL, not ${clip(url.protocol, 40)}`, value);
  }
  // The setting is kept in the mirror's folder, which is made to be copied and shared: a proxy password there would
  // travel with it. The environment's proxy variables are read on each run and never kept, so they are the way.
  if (url.username !== '' || url.password !== '') {
    throw new NetworkError(
      'bad-url',
      `The proxy ${url.host} is given with a user name or password, which would be kept in the mirror folder. ` +
        `Give the proxy without them, or set the HTTP_PROXY and HTTPS_PROXY environment variables (user name and password included) and use --proxy env, the default: they are read on each run and never kept.`,
      `${url.protocol}//${url.host}`,
    );
  }
  return url.href;
}

/**
 * The proxy (host and port, never its credentials) a request to `url` goes through with this setting, or null when it
 * goes direct: a failure to connect is then the proxy's, and is said to be. NO_PROXY is matched as the requests match it.
 */
export function proxyFor(url: URL, proxy: ProxySetting = 'env', env: ProxyEnv = process.env): string | null {
  if (proxy === 'none') return null;
  let chosen: string | undefined = proxy;
  if (proxy === 'env') {
    let httpProxy, httpsProxy;
    try {
      ({ httpProxy, httpsProxy } = envProxies(env));
    } catch {
      return null;
    }
    chosen = url.protocol === 'https:' ? (httpsProxy ?? httpProxy) : httpProxy;
    if (!chosen || bypassed(url, noProxyOf(env))) return null;
  }
  try {
    return new URL(chosen).host;
  } catch {
    return null;
  }
}

/**
 * The proxies the environment names, as URLs. A value without a scheme (`proxy.example.org:3128`, as curl and most
 * tools take it) is an http proxy: undici refused it, and every request failed with "Invalid URL", which reads as if
 * the Source's URL were wrong. A value that is no URL at all is refused by its variable's name, never quoted: it may
 * hold the proxy's password.
 */
export function envProxies(env: ProxyEnv): { httpProxy: string | undefined; httpsProxy: string | undefined } {
  const read = (lower: 'http_proxy' | 'https_proxy', upper: 'HTTP_PROXY' | 'HTTPS_PROXY'): string | undefined => {
    const name = env[lower]?.trim() ? lower : upper;
    const value = env[name]?.trim();
    if (!value) return undefined;
    const candidate = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
    try {
      const url = new URL(candidate);
      if (url.hostname !== '' && ['http:', 'https:', 'socks:', 'socks5:'].includes(url.protocol)) return candidate;
    } catch {
      // Said below.
    }
    throw new NetworkError(
      'bad-url',
      `The ${name} environment variable does not name a proxy: it is written http://HOST:PORT (with USER:PASSWORD@ before the host when the proxy asks for them). Correct it, or unset it to connect directly.`,
      '',
    );
  };
  return { httpProxy: read('http_proxy', 'HTTP_PROXY'), httpsProxy: read('https_proxy', 'HTTPS_PROXY') };
}

/**
 * NO_PROXY, or no_proxy: the lower-case form first, as for the proxies (envProxies), unless it is empty or blank.
 * (undici read `no_proxy ?? NO_PROXY`, so an empty no_proxy hid the NO_PROXY beside it.)
 */
export function noProxyOf(env: ProxyEnv): NoProxy {
  return parseNoProxy(env.no_proxy?.trim() ? env.no_proxy : (env.NO_PROXY ?? ''));
}

/**
 * A dispatcher with `agentOptions` for each pool. Requests to plain http origins go through the proxy in absolute
 * form (as browsers do), https ones through a CONNECT tunnel.
 */
export function makeDispatcher(agentOptions: Agent.Options, proxy: ProxySetting = 'env', env: ProxyEnv = process.env): Dispatcher {
  const inner = routed(agentOptions, proxy, env);
  if (!agentOptions.connections) return inner;
  // Requests beyond the connections wait in the gate, where a cancelled one is dropped at once (origin-gate.ts). The
  // origins behind one proxy share its gate: undici gives each http origin a pool of its own to the proxy, and queues
  // every https origin's CONNECT in one pool, so a crawl of many hosts (--allow-host '*', metadata, mirror locations)
  // opened as many connections to the proxy, or queued as many requests in undici, as there were hosts.
  const gateOf = inner instanceof EnvProxies ? (origin: string) => inner.gateKey(origin) : proxy === 'none' ? undefined : () => PROXY_GATE;
  return new OriginGate(inner, agentOptions.connections, gateOf);
}

/** The gate of the one proxy every origin goes through (`--proxy URL`). */
const PROXY_GATE = 'proxy';

function routed(agentOptions: Agent.Options, proxy: ProxySetting, env: ProxyEnv): Dispatcher {
  if (proxy === 'none') return new Agent(agentOptions);
  if (proxy !== 'env') return new ProxyAgent({ ...agentOptions, ...toProxy(agentOptions), uri: proxy, proxyTunnel: false });
  let httpProxy, httpsProxy;
  try {
    ({ httpProxy, httpsProxy } = envProxies(env));
  } catch (err) {
    // Each request fails saying so, rather than the client failing to be made: the app would not start at all.
    return new Agent({ ...agentOptions, connect: (_options, callback) => callback(err as Error, null) });
  }
  if (!httpProxy && !httpsProxy) return new Agent(agentOptions);
  const proxied = (uri: string) => new ProxyAgent({ ...agentOptions, ...toProxy(agentOptions), uri, proxyTunnel: false });
  const https = httpsProxy ?? httpProxy!;
  return new EnvProxies(new Agent(agentOptions), httpProxy ? proxied(httpProxy) : null, https === httpProxy ? null : proxied(https), noProxyOf(env));
}

/**
 * The environment's proxies, each origin sent to its own (http, https) or direct by NO_PROXY as no-proxy.ts reads it:
 * undici's EnvHttpProxyAgent has a reading of its own, which proxyFor could not follow. Decided once per origin.
 */
class EnvProxies extends Dispatcher {
  readonly #direct: Dispatcher;
  readonly #http: Dispatcher | null;
  /** null: the http one (one pool of connections to the proxy for both). */
  readonly #https: Dispatcher | null;
  readonly #noProxy: NoProxy;
  readonly #routes = new Map<string, Dispatcher>();

  constructor(direct: Dispatcher, http: Dispatcher | null, https: Dispatcher | null, noProxy: NoProxy) {
    super();
    this.#direct = direct;
    this.#http = http;
    this.#https = https;
    this.#noProxy = noProxy;
  }

  #route(origin: string): Dispatcher {
    let route = this.#routes.get(origin);
    if (route === undefined) {
      let url: URL;
      try {
        url = new URL(origin);
      } catch {
        return this.#direct; // undici refuses it, saying so
      }
      const proxy = url.protocol === 'https:' ? (this.#https ?? this.#http) : this.#http;
      route = proxy === null || bypassed(url, this.#noProxy) ? this.#direct : proxy;
      // Bounded: a crawl of many hosts decides again rather than keeping every origin it met.
      if (this.#routes.size >= 1_000) this.#routes.clear();
      this.#routes.set(origin, route);
    }
    return route;
  }

  /** The gate an origin's requests wait in (origin-gate.ts): the proxy's it goes through, else its own. */
  gateKey(origin: string): string {
    const route = this.#route(origin);
    return route === this.#http ? 'proxy:http' : route === this.#https ? 'proxy:https' : origin;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.#route(String(options.origin)).dispatch(options, handler);
  }

  #all(): Dispatcher[] {
    return [this.#direct, this.#http, this.#https].filter((d): d is Dispatcher => d !== null);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all(this.#all().map((d) => d.close())).then(() => undefined);
    if (callback === undefined) return closed;
    void closed.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    const destroyed = Promise.all(this.#all().map((d) => d.destroy(err))).then(() => undefined);
    if (callback === undefined) return destroyed;
    void destroyed.then(callback, callback);
  }
}

/**
 * The connections to the proxy itself, made with the same limits as the rest. undici makes them with its own defaults
 * otherwise: 5 minutes for an answer, 10 s to connect, no bound on their number, whatever the timeout and concurrency
 * say; and a request waiting for a CONNECT the proxy never answers cannot be cancelled, so an https Source behind a
 * proxy that stalls held a fetch past its deadline and a cancelled run for minutes.
 */
function toProxy(agentOptions: Agent.Options): Pick<ProxyAgent.Options, 'factory' | 'clientFactory' | 'proxyTls'> {
  const { connect, ...pool } = agentOptions;
  const timeout = connect !== undefined && typeof connect === 'object' ? connect.timeout : undefined;
  // The options undici passes (its connector to the proxy, or through the tunnel) come last: they must be kept.
  const factory = (origin: string | URL, options: object) => new Pool(origin, { ...pool, ...options });
  return { factory, clientFactory: factory, ...(timeout === undefined ? {} : { proxyTls: { timeout } }) };
}
