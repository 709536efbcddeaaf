// The connection pool every engine client uses, with the proxy setting applied. By default the environment decides,
// as curl and most tools do: HTTP_PROXY / HTTPS_PROXY (or their lower-case forms) name the proxies and NO_PROXY the
// hosts reached directly — undici's EnvHttpProxyAgent. `none` ignores the environment; a URL names one proxy for all.
import { Agent, EnvHttpProxyAgent, ProxyAgent, type Dispatcher } from 'undici';
import { NetworkError } from './errors.ts';
import { clip } from '../clip.ts';

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
    throw new NetworkError('bad-url', `The proxy must be env, none or an http(s) URL, not ${clip(value)}`, value);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NetworkError('bad-url', `The proxy must be an http or https URL, not ${clip(url.protocol, 40)}`, value);
  }
  return url.href;
}

/**
 * A dispatcher with `agentOptions` for each pool. Requests to plain http origins go through the proxy in absolute
 * form (as browsers do), https ones through a CONNECT tunnel.
 */
export function makeDispatcher(agentOptions: Agent.Options, proxy: ProxySetting = 'env', env: ProxyEnv = process.env): Dispatcher {
  if (proxy === 'none') return new Agent(agentOptions);
  if (proxy !== 'env') return new ProxyAgent({ ...agentOptions, uri: proxy, proxyTunnel: false });
  const httpProxy = env.http_proxy || env.HTTP_PROXY || undefined;
  const httpsProxy = env.https_proxy || env.HTTPS_PROXY || undefined;
  if (!httpProxy && !httpsProxy) return new Agent(agentOptions);
  return new EnvHttpProxyAgent({
    ...agentOptions,
    // Empty strings rather than undefined, so undici does not read process.env behind an injected `env`.
    httpProxy: httpProxy ?? '',
    httpsProxy: httpsProxy ?? httpProxy ?? '',
    noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
    proxyTunnel: false,
  } as EnvHttpProxyAgent.Options);
}
