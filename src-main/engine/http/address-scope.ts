// How far inside a network an address reaches, for redirects (and a mirror's other copies of a resource) that a
// Source names: a Source on the internet that redirects to 169.254.169.254 (a cloud server's metadata service), to
// this computer (127.0.0.1, localhost) or into the local network (192.168.x.x) gets the app to request what only
// this computer may reach, and to keep the answer in a mirror folder that may be shared. Browsers refuse the same
// (Private Network Access). Only addresses written as such, and `localhost`, are judged: a host name that resolves
// into the local network is not looked up here.
import { BlockList, isIP } from 'node:net';

export type AddressScope = 'public' | 'private' | 'loopback' | 'link-local';

const RANK: Record<AddressScope, number> = { public: 0, private: 1, loopback: 2, 'link-local': 3 };

function blockList(v4: [string, number][], v6: [string, number][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

const LINK_LOCAL = blockList([['169.254.0.0', 16]], [['fe80::', 10]]);
const LOOPBACK = blockList([['127.0.0.0', 8], ['0.0.0.0', 8]], [['::1', 128], ['::', 128]]);
const PRIVATE = blockList(
  [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10]],
  [['fc00::', 7]],
);

/** The scope of a URL's host: an IP address by its range, `localhost` (and its subdomains) as loopback, any other name public. */
export function addressScope(hostname: string): AddressScope {
  let host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  // An IPv4 address written as IPv6 (::ffff:169.254.169.254, which the URL parser writes ::ffff:a9fe:a9fe).
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    host = `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  const family = isIP(host);
  if (family === 0) return 'public';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (LINK_LOCAL.check(host, type)) return 'link-local';
  if (LOOPBACK.check(host, type)) return 'loopback';
  if (PRIVATE.check(host, type)) return 'private';
  return 'public';
}

const WORDS: Record<AddressScope, string> = {
  public: 'the internet',
  private: 'a local network address',
  'link-local': 'a link-local address (such as a cloud server’s metadata service)',
  loopback: 'this computer',
};

/**
 * Why `to` may not be requested on the word of a Source at `from` (it reaches further inside than `from` does), as a
 * phrase; null when it may.
 */
export function furtherInside(from: URL, to: URL): string | null {
  // Every resource of a Source is asked this about its own host: answered without parsing addresses (BlockList's
  // checks cost microseconds each, per request).
  if (to.hostname === from.hostname) return null;
  const source = addressScope(from.hostname);
  const target = addressScope(to.hostname);
  if (RANK[target] <= RANK[source]) return null;
  return `${to.host} is ${WORDS[target]}, which a Source at ${from.host} may not send requests to`;
}
