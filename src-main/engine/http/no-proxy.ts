// NO_PROXY: the hosts reached without the environment's proxy. One reading for the requests and for what is said of
// them (dispatcher.ts). It takes what curl and undici's EnvHttpProxyAgent both take, and what either of them reads
// that the other does not, as long as it cannot mean something else:
// - entries separated by commas or blanks, any case; `*` alone (blanks around it aside) means every host;
// - a name matches itself and every name under it; a leading `.` or `*.` and a trailing `.` (on the entry or on the
//   URL's host) change nothing;
// - `HOST:PORT` matches that port only (undici; curl never matches such an entry);
// - an IPv4 address in any spelling a URL takes (`127.1`, `0x7f.0.0.1`): URLs write `http://127.1/` as 127.0.0.1,
//   so neither curl nor undici ever matched the entry `127.1`; and an address matches itself only, never as the end
//   of a longer one (undici took `0.0.1` to match 127.0.0.1, curl did not);
// - an IPv6 address with or without brackets, in any of its spellings (`::1`, `[::1]`, `0:0::1`): undici took `::1`
//   for the host `:` on port 1, so the usual `NO_PROXY=localhost,127.0.0.1,::1` sent [::1] through the proxy;
// - an address block, `10.0.0.0/8` or `fd00::/8`, matching the addresses written in URLs (curl; undici matched nothing).
import { BlockList, isIPv4, isIPv6 } from 'node:net';

export interface NoProxy {
  all: boolean;
  /**
   * Names (lower case, no dots around) and IP addresses in the form URLs write them, with a port or 0 for any.
   * `exact`: an address, matching only itself.
   */
  hosts: { host: string; port: number; exact?: true }[];
  blocks: BlockList | null;
}

export function parseNoProxy(value: string): NoProxy {
  const rules: NoProxy = { all: value.trim() === '*', hosts: [], blocks: null };
  for (const raw of value.split(/[,\s]+/)) {
    const entry = raw.toLowerCase();
    if (entry === '') continue;
    const slash = /^\[?([^\]/]+)\]?\/(\d{1,3})$/.exec(entry);
    if (slash) {
      const type = isIPv4(slash[1]!) ? 'ipv4' : isIPv6(slash[1]!) ? 'ipv6' : null;
      const bits = Number(slash[2]);
      if (type !== null && bits <= (type === 'ipv4' ? 32 : 128)) (rules.blocks ??= new BlockList()).addSubnet(slash[1]!, bits, type);
      continue;
    }
    if (isIPv6(entry.replace(/^\[(.*)\]$/, '$1'))) {
      rules.hosts.push({ host: ipv6Host(entry.replace(/^\[(.*)\]$/, '$1')), port: 0 });
      continue;
    }
    const withPort = /^(.+):(\d+)$/.exec(entry);
    let host = withPort ? withPort[1]! : entry;
    const port = withPort ? Number(withPort[2]) : 0;
    const bracketed = /^\[(.*)\]$/.exec(host);
    if (bracketed && isIPv6(bracketed[1]!)) host = ipv6Host(bracketed[1]!);
    else host = host.replace(/^\*?\./, '').replace(/\.$/, '');
    if (ENDS_IN_NUMBER.test(host)) {
      // A URL's host ending in a number is an IPv4 address or no host at all: the entry is one too, or matches none.
      const address = ipv4Host(host);
      if (address !== null) rules.hosts.push({ host: address, port, exact: true });
    } else if (host !== '') rules.hosts.push({ host, port });
  }
  return rules;
}

/** Whether a request to `url` goes direct. */
export function bypassed(url: URL, rules: NoProxy): boolean {
  if (rules.all) return true;
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/\.$/, '');
  for (const entry of rules.hosts) {
    if (entry.port !== 0 && entry.port !== port) continue;
    if (host === entry.host) return true;
    if (!entry.exact && host.endsWith(entry.host) && host[host.length - entry.host.length - 1] === '.') return true;
  }
  if (rules.blocks !== null) {
    if (isIPv4(host)) return rules.blocks.check(host, 'ipv4');
    if (host.startsWith('[')) return rules.blocks.check(host.slice(1, -1), 'ipv6');
  }
  return false;
}

/** The URL standard's test for a host that is to be read as an IPv4 address: its last label is a number. */
const ENDS_IN_NUMBER = /(?:^|\.)(?:\d+|0x[\da-f]*)$/;

/** An IPv4 address as a URL's hostname writes it (`127.1` as 127.0.0.1), or null when no URL takes it. */
function ipv4Host(host: string): string | null {
  try {
    const hostname = new URL(`http://${host}/`).hostname;
    return isIPv4(hostname) ? hostname : null;
  } catch {
    return null;
  }
}

/** An IPv6 address as a URL's hostname writes it (brackets, the shortest form). */
function ipv6Host(address: string): string {
  try {
    return new URL(`http://[${address}]/`).hostname;
  } catch {
    // With a zone (`fe80::1%eth0`): no URL writes one, so it matches none.
    return `[${address}]`;
  }
}
