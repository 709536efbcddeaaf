// Finding change-notification channels (CN §4.1, §5): in a Capability List, each entry with
// capability="change-notification" is a channel (its loc the topic, its rs:ln rel="hub" the hub); a topic URL
// itself answers with Link headers rel="self" (the topic) and rel="hub". The same look at a Capability List gives
// the mirror's binding (its lists), so `rsdesk watch` can feed a mirror that was never synced.
import { clip } from '../clip.ts';
import { furtherInside } from '../http/address-scope.ts';
import type { Entry } from '../documents/model.ts';
import { HttpStatusError } from '../http/errors.ts';
import type { Http } from '../http/client.ts';
import { linksWithRel, parseLinkHeader } from '../http/link-header.ts';
import { readResponse, XML_ACCEPT } from '../load.ts';
import type { Binding } from '../mirror/state.ts';

export interface Channel {
  topic: string;
  hub: string;
  /** The Capability List that advertises it, when known. */
  capabilityListUrl: string | null;
}

export interface ChannelsFound {
  channels: Channel[];
  /** The lists of the Capability List (when the URL was one). */
  binding: Omit<Binding, 'maps' | 'allowHosts' | 'createdAt'> | null;
  /** What the URL turned out to be, in words. */
  found: string;
}

/** Channels offered from one Capability List. */
export const MAX_CHANNELS = 1_000;

export async function findChannels(http: Http, url: string, signal?: AbortSignal): Promise<ChannelsFound> {
  const response = await http.get(url, { accept: XML_ACCEPT, signal, maxBytes: 50 * 1024 * 1024 });
  if (response.status < 200 || response.status > 299) {
    await response.discard();
    throw new HttpStatusError(response.status, response.statusText, response.url);
  }
  const link = response.headers.link;
  if (link !== undefined) {
    const links = parseLinkHeader(link, response.url);
    const hub = linksWithRel(links, 'hub', response.url)[0];
    if (hub !== undefined) {
      await response.discard();
      const refusal = hubFurtherInside(hub, response.url);
      if (refusal !== null) throw new Error(refusal);
      const topic = linksWithRel(links, 'self', response.url)[0] ?? response.url;
      return { channels: [{ topic, hub, capabilityListUrl: null }], binding: null, found: 'a WebSub topic (Link rel="hub")' };
    }
  }
  // What is kept of the list: its channels (at most MAX_CHANNELS, the rest counted) and the first entry of each other
  // capability. Before, its first 1,000 entries were kept, whatever they were: a channel listed after them was not
  // found, and nothing said why.
  const entries: Entry[] = [];
  const seen = new Set<string>();
  let channelCount = 0;
  let capability = '';
  const keep = (e: Entry): void => {
    if (capability !== 'capabilitylist') return;
    const c = e.md.capability ?? '';
    if (c === 'change-notification') {
      if (++channelCount <= MAX_CHANNELS) entries.push(e);
    } else if (!seen.has(c)) {
      seen.add(c);
      entries.push(e);
    }
  };
  const doc = await readResponse(response, url, {
    signal,
    onStart: (head) => void (capability = head.capability),
    onEntry: keep,
  });
  if (doc.summary.capability !== 'capabilitylist') {
    throw new Error(`${clip(url)} is a ${doc.summary.capability} and has no Link rel="hub": no notification channel found there. Give a Capability List or a topic URL.`);
  }
  const capabilityListUrl = doc.finalUrl;
  const channels: Channel[] = [];
  const find = (c: string) => entries.find((e) => e.md.capability === c)?.loc ?? null;
  for (const e of entries) {
    if (e.md.capability !== 'change-notification') continue;
    const hub = e.links.find((l) => l.rel === 'hub')?.href;
    if (hub) channels.push({ topic: e.loc, hub, capabilityListUrl });
  }
  const count = channelCount > MAX_CHANNELS ? channelCount : channels.length;
  return {
    channels,
    binding: {
      url,
      capabilityListUrl,
      resourceListUrl: find('resourcelist'),
      changeListUrl: find('changelist'),
      resourceDumpUrl: find('resourcedump'),
      changeDumpUrl: find('changedump'),
    },
    found:
      `a Capability List with ${count.toLocaleString('en')} notification channel${count === 1 ? '' : 's'}` +
      (channelCount > MAX_CHANNELS ? `; only the first ${MAX_CHANNELS.toLocaleString('en')} are offered` : ''),
  };
}

/**
 * Why the hub a Source names may not be asked (it reaches further inside the network than the Source, as a redirect
 * may not: a Source on the internet naming 169.254.169.254 or 127.0.0.1 as its hub had the app POST there), or null.
 */
export function hubFurtherInside(hub: string, source: string): string | null {
  const why = hubNotAsked(hub, source);
  return why === null ? null : `Not subscribed: ${why}`;
}

/** The same, as a phrase ("the hub … is not asked, since …"), or null. */
export function hubNotAsked(hub: string, source: string): string | null {
  let why: string | null;
  try {
    why = furtherInside(new URL(source), new URL(hub));
  } catch {
    return null;
  }
  return why === null ? null : `the hub ${clip(hub)} is not asked, since ${why}`;
}
