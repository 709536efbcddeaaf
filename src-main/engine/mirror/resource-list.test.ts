// A Resource List Index whose part redirects back to the index: before, the index was read as that part, found to
// be an index, and the whole baseline stopped ("…p2.xml … is not a Resource List"). It is one part fewer, as an index
// that names itself is. A Source of its own on 127.0.0.1; every URL it names is on it.
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sync } from './sync.ts';

let server: Server | null = null;
afterEach(() => {
  server?.close();
  server = null;
});

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

async function source(p2: (base: string) => { status: number; headers: Record<string, string>; body?: string }): Promise<{ base: string; requests: string[] }> {
  const requests: string[] = [];
  const s = createServer((req, res) => {
    const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    requests.push(req.url ?? '');
    const xml = (body: string) => void res.writeHead(200, { 'content-type': 'application/xml' }).end(body);
    if (req.url === '/rl.xml') return xml(`<sitemapindex ${NS}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><sitemap><loc>${base}/p1.xml</loc></sitemap><sitemap><loc>${base}/p2.xml</loc></sitemap></sitemapindex>`);
    if (req.url === '/p1.xml') return xml(`<urlset ${NS}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>${base}/r/1</loc></url></urlset>`);
    if (req.url === '/p2.xml') {
      const a = p2(base);
      return void res.writeHead(a.status, a.headers).end(a.body ?? '');
    }
    if (req.url === '/r/1') return void res.writeHead(200).end('one');
    res.writeHead(404).end();
  });
  server = s;
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  return { base: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, requests };
}

describe('a Resource List Index part that redirects', () => {
  it('to the index itself: one part fewer, said, and the rest mirrored', async () => {
    const { base } = await source((b) => ({ status: 302, headers: { location: `${b}/rl.xml` } }));
    const notes: string[] = [];
    const result = await sync({ url: `${base}/rl.xml`, dest: mkdtempSync(join(tmpdir(), 'index-redirect-')), proxyEnv: {}, onNote: (n) => notes.push(n) });
    expect(result).toMatchObject({ created: 1, failed: 0, checkpoint: '2024-01-01T00:00:00Z' });
    expect(notes).toContain(`1 part of the Resource List Index ${base}/rl.xml redirects to the index itself (the first: ${base}/p2.xml); read once, as the index.`);
  });

  it('when every part leads back to the index: refused, as an index naming only itself is (it lists no resource)', async () => {
    const requests: string[] = [];
    const s = createServer((req, res) => {
      const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      requests.push(req.url ?? '');
      if (req.url === '/rl.xml') return void res.writeHead(200, { 'content-type': 'application/xml' }).end(`<sitemapindex ${NS}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><sitemap><loc>${base}/p2.xml</loc></sitemap></sitemapindex>`);
      if (req.url === '/p2.xml') return void res.writeHead(302, { location: `${base}/rl.xml` }).end();
      res.writeHead(404).end();
    });
    server = s;
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const error = await sync({ url: `${base}/rl.xml`, dest: mkdtempSync(join(tmpdir(), 'index-redirect-')), proxyEnv: {} }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(`${base}/p2.xml, listed in the Resource List Index, is not a Resource List`);
  });

  it('to another index: still refused, the run stopped with why', async () => {
    const { base } = await source(() => ({ status: 200, headers: { 'content-type': 'application/xml' }, body: `<sitemapindex ${NS}><rs:md capability="resourcelist"/></sitemapindex>` }));
    const error = await sync({ url: `${base}/rl.xml`, dest: mkdtempSync(join(tmpdir(), 'index-redirect-')), proxyEnv: {} }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(`${base}/p2.xml, listed in the Resource List Index, is not a Resource List`);
  });
});
