// Finding a Source's notification channels in a Capability List it serves: whatever the list holds, a channel it
// names is found, or the reason it is not is said.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Http } from '../http/client.ts';
import { findChannels } from './channels.ts';

let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
});

/** Serves the document `body(base)` at every path; returns the base URL. */
async function serve(body: (base: string) => string): Promise<string> {
  let text = '';
  server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/xml' }).end(text));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  text = body(base);
  return base;
}

const capabilityList = (base: string, entries: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:ln rel="up" href="${base}/.well-known/resourcesync"/>
<rs:md capability="capabilitylist"/>
${entries.join('\n')}
</urlset>`;

describe('findChannels', () => {
  it('finds a channel listed after more than a thousand other entries', async () => {
    const base = await serve((base) => {
      const padding = Array.from({ length: 1_500 }, (_, i) => `<url><loc>${base}/other/${i}.xml</loc><rs:md capability="resourcelist"/></url>`);
      const channel = `<url><loc>${base}/topic</loc><rs:md capability="change-notification"/><rs:ln rel="hub" href="${base}/hub"/></url>`;
      return capabilityList(base, [...padding, channel]);
    });
    const found = await findChannels(new Http({ timeoutMs: 5_000 }), `${base}/capabilitylist.xml`);
    // Before, only the first 1,000 entries were looked at, and a channel after them was not found, without a word.
    expect(found.channels).toEqual([{ topic: `${base}/topic`, hub: `${base}/hub`, capabilityListUrl: `${base}/capabilitylist.xml` }]);
    expect(found.binding?.resourceListUrl).toBe(`${base}/other/0.xml`);
  });

  it('offers at most 1,000 channels, and says how many more the list names', async () => {
    const base = await serve((base) =>
      capabilityList(
        base,
        Array.from({ length: 1_200 }, (_, i) => `<url><loc>${base}/topic/${i}</loc><rs:md capability="change-notification"/><rs:ln rel="hub" href="${base}/hub"/></url>`),
      ),
    );
    const found = await findChannels(new Http({ timeoutMs: 5_000 }), `${base}/capabilitylist.xml`);
    expect(found.channels).toHaveLength(1_000);
    expect(found.found).toBe('a Capability List with 1,200 notification channels; only the first 1,000 are offered');
  });

  it('refuses a topic whose Link header names a hub further inside the network than the topic itself', async () => {
    server = createServer((_req, res) =>
      res.writeHead(200, { link: '<http://169.254.169.254/hub>; rel="hub", <http://169.254.169.254/topic>; rel="self"' }).end('a topic'),
    );
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/topic`;
    // Before, the channel was offered as it came, and subscribing compared the hub with a topic the same header named.
    await expect(findChannels(new Http({ timeoutMs: 5_000 }), url)).rejects.toThrow(
      /^Not subscribed: the hub http:\/\/169\.254\.169\.254\/hub is not asked, since 169\.254\.169\.254 is a link-local address .* which a Source at 127\.0\.0\.1:\d+ may not send requests to$/,
    );
  });
});
