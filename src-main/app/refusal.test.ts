// A refused large document must not freeze the engine: a gzip bomb of valid entries (over 50 MB unpacked) served
// from 127.0.0.1 is refused, its partial rows are deleted while commands keep answering, the database shrinks back,
// and a retry soon after answers the remembered refusal without downloading it again.
import { statSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store/store.ts';
import { RefusalMemory } from '../engine/refusals.ts';
import { DocumentService, REFUSAL_MEMORY_MS } from './documents.ts';
import { EventHub } from './events.ts';
import { HttpHolder } from './http-holder.ts';
import { createService, type Service } from './service.ts';

const RS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

/** A valid Resource List that unpacks to about 60 MB: every entry well-formed, only the size is wrong. */
function gzipBomb(): Buffer {
  const head = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${RS}>\n<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>\n`;
  const entries: string[] = [];
  for (let i = 0; i < 500_000; i++) {
    entries.push(`<url><loc>http://127.0.0.1/resources/${String(i).padStart(8, '0')}</loc><lastmod>2013-01-02T13:00:00Z</lastmod><rs:md length="${i}"/></url>\n`);
  }
  return gzipSync(Buffer.from(head + entries.join('') + '</urlset>\n'), { level: 1 });
}

let server: Server;
let base: string;
let dir: string;
let bomb: Buffer;
const hits = new Map<string, number>();

beforeAll(async () => {
  bomb = gzipBomb();
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/bomb.xml.gz') {
      res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(bomb.length) });
      res.end(bomb);
    } else if (path === '/doctype.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end('<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY a "b">]>\n<urlset/>');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-refusal-'));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function databaseBytes(path: string): number {
  return [path, `${path}-wal`].filter(existsSync).reduce((sum, file) => sum + statSync(file).size, 0);
}

describe('a refused large document', { timeout: 120_000 }, () => {
  let service: Service;
  let store: Store;
  const path = () => join(dir, 'db.sqlite');

  it('is refused, then cleaned up while app.info keeps answering quickly, and the database shrinks back', async () => {
    store = openStore(path());
    service = createService({ store, adapter: 'http', version: '0.0.0', log: () => undefined });
    const before = databaseBytes(path());
    const url = `${base}/bomb.xml.gz`;

    const refused = await service.dispatch('documents.summary', { url });
    expect(refused).toMatchObject({ ok: false, error: { code: 'network' } });
    expect((refused as { error: { message: string } }).error.message).toBe(`${url} unpacks to more than 52,428,800 bytes`);
    const peak = databaseBytes(path());
    expect(peak).toBeGreaterThan(30 * 1024 * 1024);

    // While the partial rows are deleted, commands answer: ping app.info until the purge is done.
    let done = false;
    const purged = store.purged().then(() => (done = true));
    const latencies: number[] = [];
    const purgeStarted = Date.now();
    while (!done) {
      // Asked for 5 ms from now: any time a purge step holds the thread shows up as lateness.
      const asked = performance.now();
      await new Promise((r) => setTimeout(r, 5));
      const info = await service.dispatch('app.info', {});
      latencies.push(performance.now() - asked - 5);
      expect(info.ok).toBe(true);
    }
    await purged;
    const purgeMs = Date.now() - purgeStarted;
    const after = databaseBytes(path());
    console.log(
      `refused bomb: database ${mb(before)} → ${mb(peak)} at the refusal → ${mb(after)} after the purge (${purgeMs} ms, ` +
        `${latencies.length} app.info calls meanwhile, slowest ${Math.max(...latencies).toFixed(1)} ms)`,
    );
    // Commands were answered all along: many calls, and no single purge step held the thread for half the purge
    // (relative, so that a busy machine slowing everything alike does not fail it).
    expect(latencies.length).toBeGreaterThan(5);
    expect(Math.max(...latencies)).toBeLessThan(purgeMs / 2);
    expect(after).toBeLessThan(5 * 1024 * 1024);
  });

  it('a retry soon after answers the remembered refusal at once, without downloading it again', async () => {
    const url = `${base}/bomb.xml.gz`;
    const fetched = hits.get('/bomb.xml.gz');
    const again = await service.dispatch('documents.summary', { url, refresh: true });
    expect(again).toMatchObject({ ok: false, error: { code: 'network' } });
    expect((again as { error: { message: string } }).error.message).toBe(
      `${url} unpacks to more than 52,428,800 bytes (refused less than a minute ago and not fetched again; it can be retried in 10 min)`,
    );
    expect(hits.get('/bomb.xml.gz')).toBe(fetched);
    await service.close();
  });
});

describe('the refusal memory', () => {
  it('lasts ten minutes per URL, then the document is fetched again', async () => {
    const store = openStore(':memory:');
    const http = new HttpHolder({ bearerToken: null, tokenOrigin: null, timeoutMs: 5_000 }, 'test');
    let now = 1_000_000;
    const documents = new DocumentService({ store, http, events: new EventHub(), refusals: new RefusalMemory({ now: () => now }) });
    const url = `${base}/doctype.xml`;
    try {
      const refusal = (work: Promise<unknown>) => work.then(() => new Error('loaded'), (e: Error) => e);
      const first = await refusal(documents.load(url));
      expect(first.message).toMatch(/DOCTYPE/);
      expect(hits.get('/doctype.xml')).toBe(1);
      now += 3 * 60_000;
      const second = await refusal(documents.load(url));
      expect(second.message).toBe(`${first.message} (refused 3 min ago and not fetched again; it can be retried in 7 min)`);
      expect((second as Error & { code: string }).code).toBe('doctype');
      expect(hits.get('/doctype.xml')).toBe(1);
      now += REFUSAL_MEMORY_MS;
      await refusal(documents.load(url));
      expect(hits.get('/doctype.xml')).toBe(2);
    } finally {
      await documents.close();
      await http.close();
      store.close();
    }
  });
});

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
