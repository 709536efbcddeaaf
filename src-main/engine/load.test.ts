import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PATHS, startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { DocumentError } from './documents/errors.ts';
import type { Entry } from './documents/model.ts';
import { Http } from './http/client.ts';
import { HttpStatusError, NetworkError } from './http/errors.ts';
import { HEAD_BYTES, decodeHead, loadDocument } from './load.ts';

let fixture: FixtureSource;
let http: Http;

beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 30, bigListParts: 1, bigListEntries: 3000 });
  http = new Http({ timeoutMs: 5000 });
});

afterAll(async () => {
  await http.close();
  await fixture.close();
});

describe('loadDocument', () => {
  it('streams a document into the reader, with entries, size, content type and head', async () => {
    const entries: Entry[] = [];
    const progress: { bytes: number; entries: number }[] = [];
    const url = fixture.url + PATHS.dataset1.resourceList;
    const loaded = await loadDocument(http, url, {
      onEntry: (entry) => void entries.push(entry),
      onProgress: (p) => progress.push(p),
    });
    expect(loaded.summary.url).toBe(url);
    expect(loaded.summary.capability).toBe('resourcelist');
    expect(loaded.summary.entries).toBe(30);
    expect(entries).toHaveLength(30);
    expect(entries[0].loc).toBe(`${fixture.url}/dataset1/res/1.json`);
    expect(loaded.contentType).toBe('application/xml');
    expect(loaded.finalUrl).toBe(url);
    const raw = await (await http.get(url)).text();
    expect(loaded.bytes).toBe(Buffer.byteLength(raw));
    expect(loaded.head).toBe(raw);
    expect(progress.at(-1)).toEqual({ bytes: loaded.bytes, entries: 30 });
  });

  it('keeps only the first 256 KiB as head of a large document', async () => {
    const loaded = await loadDocument(http, fixture.url + PATHS.dataset2.resourceListPart(1));
    expect(loaded.summary.entries).toBe(3000);
    expect(loaded.bytes).toBeGreaterThan(HEAD_BYTES);
    expect(Buffer.byteLength(loaded.head)).toBeLessThanOrEqual(HEAD_BYTES);
    expect(Buffer.byteLength(loaded.head)).toBeGreaterThan(HEAD_BYTES - 4);
    expect(loaded.head.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
  });

  it('follows redirects and reports the final URL', async () => {
    const loaded = await loadDocument(http, fixture.url + PATHS.redirectChain);
    expect(loaded.finalUrl).toBe(fixture.url + PATHS.dataset1.capabilityList);
    expect(loaded.summary.capability).toBe('capabilitylist');
  });

  it('turns a non-2xx status into a clear error', async () => {
    const url = `${fixture.url}/nothing-here.xml`;
    const err = await loadDocument(http, url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as HttpStatusError).status).toBe(404);
    expect((err as Error).message).toBe(`HTTP 404 Not Found for ${url}`);
  });

  it('reads a document whatever its Content-Type says, or without one', async () => {
    const none = await loadDocument(http, fixture.url + PATHS.broken.noContentType);
    expect(none.contentType).toBeNull();
    expect(none.summary.capability).toBe('resourcelist');
    const wrong = await loadDocument(http, fixture.url + PATHS.broken.wrongContentType);
    expect(wrong.contentType).toBe('text/html; charset=utf-8');
    expect(wrong.summary.capability).toBe('capabilitylist');
  });

  it('passes the reader’s refusals through', async () => {
    const err = await loadDocument(http, fixture.url + PATHS.broken.htmlAsXml).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DocumentError);
    expect((err as DocumentError).code).toBe('html');
  });

  it('unpacks a gzipped sitemap', async () => {
    const entries: Entry[] = [];
    const loaded = await loadDocument(http, fixture.url + PATHS.dataset1.resourceListGzip, {
      onEntry: (e) => void entries.push(e),
    });
    expect(loaded.summary.capability).toBe('resourcelist');
    expect(entries).toHaveLength(30);
    expect(loaded.head.startsWith('<?xml')).toBe(true);
  });

  it('enforces the size limit', async () => {
    const err = await loadDocument(http, fixture.url + PATHS.dataset2.resourceListPart(1), { maxBytes: 100_000 }).catch(
      (e: unknown) => e,
    );
    expect((err as NetworkError).code).toBe('too-large');
  });

  it('can be cancelled while reading', async () => {
    const controller = new AbortController();
    let seen = 0;
    const err = await loadDocument(http, fixture.url + PATHS.dataset2.resourceListPart(1), {
      signal: controller.signal,
      onEntry: () => {
        if (++seen === 10) controller.abort();
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as { code: string }).code).toBe('aborted');
    expect(seen).toBeLessThan(3000);
  });

  it('decodes the head in the declared encoding and never cuts a character', () => {
    const latin1 = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>caf'), Buffer.from([0xe9]), Buffer.from('</a>')]);
    expect(decodeHead(latin1)).toBe('<?xml version="1.0" encoding="ISO-8859-1"?><a>café</a>');
    const utf8 = Buffer.from('<a>é</a>');
    expect(decodeHead(utf8.subarray(0, 4))).toBe('<a>');
  });
});
