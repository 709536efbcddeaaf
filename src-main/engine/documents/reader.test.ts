import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { Socket } from 'node:net';
import dns from 'node:dns';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DocumentError } from './errors.ts';
import type { Entry } from './model.ts';
import { LIMITS } from './parser.ts';
import { DEFAULT_MAX_BYTES, readDocument, readDocumentFile } from './reader.ts';
import { NS, UP_CAPABILITY_LIST, byteChunks, chunks, lineOf, read, refusal, url, urlset } from './test-support.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const RL_MD = '<rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>';
const GOOD = urlset(RL_MD, [url('http://example.com/res1'), url('http://example.com/res2')], [UP_CAPABILITY_LIST]);

function header(capability = 'resourcelist'): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${NS}>\n${UP_CAPABILITY_LIST}\n<rs:md capability="${capability}" at="2013-01-03T09:00:00Z"/>\n`;
}

function entryXml(i: number): string {
  return `<url><loc>http://example.com/res/${i}</loc><lastmod>2013-01-02T13:00:00Z</lastmod><rs:md hash="md5:${i
    .toString(16)
    .padStart(32, '0')}" length="${i}" type="text/html"/></url>\n`;
}

describe('readDocument: reading', () => {
  it('reads a Resource List, its document-level rs:md and rs:ln, and each entry in order', async () => {
    const { summary, entries } = await read(GOOD);
    expect(summary).toEqual({
      url: 'http://127.0.0.1/test.xml',
      root: 'urlset',
      capability: 'resourcelist',
      isIndex: false,
      md: { capability: 'resourcelist', at: '2013-01-03T09:00:00Z' },
      links: [{ rel: 'up', href: 'http://example.com/dataset1/capabilitylist.xml' }],
      entries: 2,
      findings: [],
    });
    expect(entries.map((e) => [e.index, e.loc, e.line])).toEqual([
      [0, 'http://example.com/res1', lineOf(GOOD, 'res1')],
      [1, 'http://example.com/res2', lineOf(GOOD, 'res2')],
    ]);
  });

  it('reads every rs:md and rs:ln attribute, loc, lastmod and changefreq, raw', async () => {
    const md =
      'capability="x" at="a" completed="b" from="c" until="d" change="created" datetime="e" encoding="gzip" hash="h" length="12" path="/p" type="text/plain"';
    const ln = 'rel="duplicate" href="http://m.example.com/r" hash="h2" length="3" modified="m" path="/q" pri="2" type="t" encoding="br"';
    const xml = urlset('<rs:md capability="changelist" from="2013-01-01T00:00:00Z"/>', [
      '<url>',
      '  <loc> http://example.com/r?a=1&amp;b=2 </loc>',
      '  <lastmod>2013-01-02T13:00:00Z</lastmod>',
      '  <changefreq>daily</changefreq>',
      `  <rs:md ${md}/>`,
      `  <rs:ln ${ln}/>`,
      '</url>',
    ]);
    const { entries } = await read(xml);
    expect(entries).toHaveLength(1);
    const entry = entries[0];
    expect(entry.loc).toBe('http://example.com/r?a=1&b=2');
    expect(entry.lastmod).toBe('2013-01-02T13:00:00Z');
    expect(entry.changefreq).toBe('daily');
    expect(entry.md).toEqual({
      capability: 'x', at: 'a', completed: 'b', from: 'c', until: 'd', change: 'created', datetime: 'e',
      encoding: 'gzip', hash: 'h', length: '12', path: '/p', type: 'text/plain',
    });
    expect(entry.links).toEqual([
      { rel: 'duplicate', href: 'http://m.example.com/r', hash: 'h2', length: '3', modified: 'm', path: '/q', pri: '2', type: 't', encoding: 'br' },
    ]);
    expect(entry.line).toBe(lineOf(xml, '<url>'));
  });

  it('normalises the whitespace of hash values spanning lines to single spaces', async () => {
    const xml = urlset(RL_MD, ['<url><loc>http://example.com/r</loc><rs:md hash="md5:1e0d5cb8ef6ba40c99b14c0237be735e', '   sha-1:a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"/></url>'], [UP_CAPABILITY_LIST]);
    const { summary, entries } = await read(xml);
    expect(entries[0].md.hash).toBe('md5:1e0d5cb8ef6ba40c99b14c0237be735e sha-1:a94a8fe5ccb19ba61c4c0873d391e987982fbbd3');
    expect(summary.findings).toEqual([]);
  });

  it('reads loc given as CDATA and accepts namespace prefixes other than rs, and a prefixed sitemap namespace', async () => {
    const xml = [
      '<?xml version="1.0"?>',
      '<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:r="http://www.openarchives.org/rs/terms/">',
      '<r:ln rel="up" href="http://example.com/cl.xml"/>',
      '<r:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>',
      '<sm:url><sm:loc><![CDATA[http://example.com/a?b=1&c=2]]></sm:loc></sm:url>',
      '</sm:urlset>',
    ].join('\n');
    const { summary, entries } = await read(xml);
    expect(summary.capability).toBe('resourcelist');
    expect(entries.map((e) => e.loc)).toEqual(['http://example.com/a?b=1&c=2']);
    expect(summary.findings).toEqual([]);
  });

  it('gives the same result whatever the chunking, including one character at a time', async () => {
    const whole = await read(GOOD);
    for (const chunkSize of [1, 2, 3, 7, 64]) {
      const parts = await read(GOOD, { chunkSize });
      expect(parts).toEqual(whole);
    }
  });

  it('reads bytes: UTF-8 split inside a multi-byte character, BOMs, UTF-16, a declared ISO-8859-1', async () => {
    const text = urlset(RL_MD, [url('http://example.com/ünï/☃/𝄞')], [UP_CAPABILITY_LIST]);
    const utf8 = Buffer.from(text, 'utf8');
    for (const size of [1, 2, 3, 5, 1000]) {
      const entries: Entry[] = [];
      await readDocument(byteChunks(utf8, size), { url: 'u', onEntry: (e) => void entries.push(e) });
      expect(entries[0].loc).toBe('http://example.com/ünï/☃/𝄞');
    }
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8]);
    expect((await readDocument(byteChunks(withBom, 7), { url: 'u' })).entries).toBe(1);
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text.replace('UTF-8', 'UTF-16'), 'utf16le')]);
    const locs: string[] = [];
    await readDocument(byteChunks(utf16, 5), { url: 'u', onEntry: (e) => void locs.push(e.loc) });
    expect(locs).toEqual(['http://example.com/ünï/☃/𝄞']);
    const latin1 = Buffer.from(urlset(RL_MD, [url('http://example.com/café')], [UP_CAPABILITY_LIST]).replace('UTF-8', 'ISO-8859-1'), 'latin1');
    locs.length = 0;
    await readDocument(byteChunks(latin1, 3), { url: 'u', onEntry: (e) => void locs.push(e.loc) });
    expect(locs).toEqual(['http://example.com/café']);
  });
});

describe('readDocument: refusals', () => {
  it('refuses what is not XML', async () => {
    for (const text of ['hello world', '{"urlset": []}', 'Not Found\n', '\u0000\u0001garbage']) {
      const err = await refusal(text);
      expect(err.code, text).toBe('not-xml');
    }
  });

  it('refuses an empty document', async () => {
    expect((await refusal('')).code).toBe('empty');
    expect((await refusal(' \n\t ')).code).toBe('empty');
  });

  it('refuses truncated XML, wherever it is cut', async () => {
    for (const cut of [GOOD.indexOf('<url>') + 3, GOOD.indexOf('res2'), GOOD.length - 3]) {
      const err = await refusal(GOOD.slice(0, cut));
      expect(err.code, `cut at ${cut}`).toBe('truncated');
      expect(err.message).toMatch(/truncated/);
    }
    expect((await refusal('<?xml version="1.0" encoding="UTF-8"?>\n')).code).toBe('truncated');
    // A server that says the body is 20 bytes long: cut inside the root's start tag, whose name is not known yet.
    const early = await refusal(GOOD.slice(0, GOOD.indexOf('<urlset') + 20));
    expect(early.code).toBe('truncated');
    expect(early.message).toMatch(/is truncated: it ends at line \d+ inside its first tag$/);
    expect((await refusal(GOOD.slice(0, GOOD.indexOf('<url>') + 3))).message).toMatch(/before <\/urlset>$/);
  });

  it('refuses XML that is not well-formed, with its line', async () => {
    const xml = urlset(RL_MD, ['<url><loc>http://example.com/a</loc>', '<rs:md length="1"></url>'], [UP_CAPABILITY_LIST]);
    const err = await refusal(xml);
    expect(err.code).toBe('malformed');
    expect(err.line).toBe(lineOf(xml, '</url>'));
    expect((await refusal(urlset(RL_MD, ['<url><loc>a &nbsp; b</loc></url>']))).code).toBe('malformed');
    expect((await refusal(urlset(RL_MD, ['<url><x:loc>a</x:loc></url>']))).code).toBe('malformed');
  });

  it('refuses HTML pages', async () => {
    const pages = [
      '<!DOCTYPE html>\n<html><head><title>404</title></head><body>Not found</body></html>',
      '<!doctype html><html lang=en><meta charset=utf-8>',
      '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">\n<HTML>',
      '<html>\n<head><link rel="resourcesync" href="x"></head></html>',
      '<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>',
    ];
    for (const page of pages) expect((await refusal(page)).code, page).toBe('html');
  });

  it('refuses a root that is not urlset or sitemapindex', async () => {
    const err = await refusal('<?xml version="1.0"?>\n<rss version="2.0"><channel/></rss>');
    expect(err.code).toBe('wrong-root');
    expect(err.message).toMatch(/<rss>/);
    expect((await refusal('<feed xmlns="http://www.w3.org/2005/Atom"></feed>')).code).toBe('wrong-root');
  });

  it('refuses a document in another namespace, naming the namespace found and the one expected', async () => {
    const junk = GOOD.replace('xmlns:rs="http://www.openarchives.org/rs/terms/"', 'xmlns:rs="http://www.openarchives.example.net/rs/terms/"');
    const err = await refusal(junk);
    expect(err.code).toBe('wrong-namespace');
    expect(err.message).toContain('http://www.openarchives.example.net/rs/terms/');
    expect(err.message).toContain('http://www.openarchives.org/rs/terms/');

    const oldSitemaps = GOOD.replace('http://www.sitemaps.org/schemas/sitemap/0.9', 'http://www.google.com/schemas/sitemap/0.84');
    const err2 = await refusal(oldSitemaps);
    expect(err2.code).toBe('wrong-namespace');
    expect(err2.message).toContain('http://www.google.com/schemas/sitemap/0.84');
    expect(err2.message).toContain('http://www.sitemaps.org/schemas/sitemap/0.9');

    const noNamespace = '<urlset><rs:md xmlns:rs="http://www.openarchives.org/rs/terms/" capability="resourcelist"/></urlset>';
    expect((await refusal(noNamespace)).code).toBe('wrong-namespace');

    // The junk namespace declared on the element itself, and md in the sitemap namespace.
    const onElement = urlset('<rs:md xmlns:rs="http://junk.example.org/rs/terms/" capability="resourcelist" at="2013-01-03T09:00:00Z"/>');
    const err3 = await refusal(onElement);
    expect(err3.code).toBe('wrong-namespace');
    expect(err3.message).toContain('http://junk.example.org/rs/terms/');
    expect((await refusal(urlset('<md capability="resourcelist"/>'))).code).toBe('wrong-namespace');
  });

  it('refuses a document without a document-level rs:md (a plain sitemap)', async () => {
    const sitemap = `<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${url('http://example.com/a')}\n</urlset>`;
    const err = await refusal(sitemap);
    expect(err.code).toBe('missing-md');
    expect(err.line).toBe(2);
    expect((await refusal(`<urlset ${NS}></urlset>`)).code).toBe('missing-md');
  });

  it('refuses a sitemap without rs:md after a bounded number of entries, having handed none of them out', async () => {
    let handed = 0;
    let pulled = 0;
    async function* endless(): AsyncGenerator<string> {
      yield `<urlset ${NS}>\n`;
      for (;;) {
        pulled++;
        yield url(`http://example.com/${pulled}`);
      }
    }
    await expect(readDocument(endless(), { url: 'u', onEntry: () => void handed++ })).rejects.toMatchObject({ code: 'missing-md' });
    expect(handed).toBe(0);
    expect(pulled).toBeLessThan(LIMITS.maxEntriesBeforeMd + 10);
  });

  it('refuses an rs:md without capability, and an unknown capability', async () => {
    const noCapability = urlset('<rs:md at="2013-01-03T09:00:00Z"/>');
    const err = await refusal(noCapability);
    expect(err.code).toBe('missing-capability');
    expect(err.line).toBe(lineOf(noCapability, '<rs:md'));
    const unknown = await refusal(urlset('<rs:md capability="resourcelist-archive"/>'));
    expect(unknown.code).toBe('unknown-capability');
    expect(unknown.message).toContain('"resourcelist-archive"');
  });

  it('refuses any DOCTYPE at once: nothing after it is read, nothing is fetched', async () => {
    const server: Server = createServer((_req, res) => {
      requests++;
      res.end('<!ENTITY x "pwned">');
    });
    let requests = 0;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const connect = vi.spyOn(Socket.prototype, 'connect');
    const lookup = vi.spyOn(dns, 'lookup');
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    try {
      let pulledAfterDoctype = 0;
      async function* input(): AsyncGenerator<string> {
        yield `<?xml version="1.0"?>\n<!DOCTYPE urlset SYSTEM "http://127.0.0.1:${port}/evil.dtd" [\n`;
        yield `  <!ENTITY ext SYSTEM "http://127.0.0.1:${port}/secret">\n]>\n`;
        for (;;) {
          pulledAfterDoctype++;
          yield `<urlset ${NS}><rs:md capability="resourcelist"/><url><loc>&ext;</loc></url></urlset>`;
        }
      }
      const err = await readDocument(input(), { url: 'u' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DocumentError);
      expect((err as DocumentError).code).toBe('doctype');
      expect((err as DocumentError).line).toBe(2);
      expect(pulledAfterDoctype).toBe(0);
      // Give a stray request time to arrive before asserting there was none.
      await new Promise((r) => setTimeout(r, 100));
      expect(requests).toBe(0);
      expect(connect).not.toHaveBeenCalled();
      expect(lookup).not.toHaveBeenCalled();
      expect(fetchSpy).not.toHaveBeenCalled();
    } finally {
      connect.mockRestore();
      lookup.mockRestore();
      fetchSpy.mockRestore();
      server.close();
    }
  });

  it('finds a DOCTYPE after a long prolog fed one character at a time, in linear time, with its line', async () => {
    const prolog = `<?xml version="1.0"?>\n<!-- ${'licence text\n'.repeat(20_000)} -->\n<?pi data?>\n`;
    const lines = prolog.split('\n').length;
    const t0 = performance.now();
    const err = await refusal(`${prolog}<!DOCTYPE urlset [<!ENTITY a "b">]>\n<urlset/>`, { chunkSize: 1 });
    expect(err.code).toBe('doctype');
    expect(err.line).toBe(lines);
    expect(performance.now() - t0).toBeLessThan(5000);
    const split = await refusal('<?xml version="1.0"?><!DOC' + 'TYPE html><html></html>', { chunkSize: 25 });
    expect(split.code).toBe('html');
  });

  it('refuses billion laughs at the DOCTYPE, in bounded time and memory', async () => {
    const lol = [
      '<?xml version="1.0"?>',
      '<!DOCTYPE lolz [',
      ' <!ENTITY lol "lol">',
      ...Array.from({ length: 9 }, (_, i) => ` <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`),
      ']>',
      `<urlset ${NS}><rs:md capability="resourcelist"/><url><loc>&lol9;</loc></url></urlset>`,
    ].join('\n');
    const heap = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    const err = await refusal(lol);
    expect(err.code).toBe('doctype');
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(32 * 1024 * 1024);
    // A DOCTYPE anywhere else is refused too (the parser itself sees it).
    expect(['doctype', 'malformed']).toContain((await refusal(`<urlset ${NS}><!DOCTYPE x></urlset>`)).code);
  });

  it('refuses more than 50 MB, counting bytes as they stream and stopping at once, in bounded memory', async () => {
    const entry = Buffer.from(entryXml(1));
    const head = Buffer.from(header());
    let yielded = 0;
    let closed = false;
    let peakHeap = 0;
    const baseline = process.memoryUsage().heapUsed;
    // Exactly DEFAULT_MAX_BYTES + 1 bytes, generated lazily from one reused buffer.
    async function* huge(): AsyncGenerator<Uint8Array> {
      try {
        yielded += head.length;
        yield head;
        const chunk = Buffer.concat(Array.from({ length: 4096 }, () => entry));
        while (yielded < DEFAULT_MAX_BYTES + 1) {
          const part = chunk.subarray(0, Math.min(chunk.length, DEFAULT_MAX_BYTES + 1 - yielded));
          yielded += part.length;
          yield part;
          if (yielded % (chunk.length * 16) < chunk.length) peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
        }
        throw new Error('the reader should have stopped before the end of the stream');
      } finally {
        closed = true;
      }
    }
    let handed = 0;
    const err = await readDocument(huge(), { url: 'u', onEntry: () => void handed++ }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DocumentError);
    expect((err as DocumentError).code).toBe('too-large');
    expect(yielded).toBe(DEFAULT_MAX_BYTES + 1);
    expect(closed).toBe(true);
    expect(handed).toBeGreaterThan(200_000);
    expect(peakHeap - baseline).toBeLessThan(64 * 1024 * 1024);
  });

  it('reads a document of exactly maxBytes and refuses one byte more', async () => {
    const bytes = Buffer.byteLength(GOOD);
    expect((await read(GOOD, { maxBytes: bytes })).summary.entries).toBe(2);
    const err = await refusal(GOOD, { maxBytes: bytes - 1 });
    expect(err.code).toBe('too-large');
    const multiByte = urlset(RL_MD, [url('http://example.com/☃')], [UP_CAPABILITY_LIST]);
    expect((await refusal(multiByte, { maxBytes: multiByte.length })).code).toBe('too-large');
  });

  it('refuses absurd nesting, huge attributes, huge text nodes and huge values', async () => {
    const deep = urlset(RL_MD, [`<url><loc>http://e.com/</loc><x:a xmlns:x="urn:x">${'<x:a>'.repeat(100)}${'</x:a>'.repeat(101)}</url>`]);
    expect((await refusal(deep)).code).toBe('too-deep');
    const hugeAttribute = urlset(RL_MD, [`<url><loc>http://e.com/</loc><rs:md hash="${'a'.repeat(LIMITS.maxTokenChars * 2)}"/></url>`]);
    expect((await refusal(hugeAttribute, { chunkSize: 64 * 1024 })).code).toBe('token-too-large');
    const hugeText = urlset(RL_MD, [`<url><loc>http://e.com/</loc><x:y xmlns:x="urn:x">${'t'.repeat(LIMITS.maxTokenChars * 2)}</x:y></url>`]);
    const textRefusal = await refusal(hugeText, { chunkSize: 64 * 1024 });
    expect(textRefusal.code).toBe('token-too-large');
    expect(textRefusal.message).toMatch(/exceeds 1,048,576 characters$/);
    const hugeComment = urlset(RL_MD, [`<!--${'c'.repeat(LIMITS.maxTokenChars * 2)}-->`]);
    expect((await refusal(hugeComment, { chunkSize: 64 * 1024 })).code).toBe('token-too-large');
    const hugeLoc = urlset(RL_MD, [`<url><loc>http://e.com/${'p'.repeat(LIMITS.maxValueChars)}</loc></url>`]);
    expect((await refusal(hugeLoc)).code).toBe('token-too-large');
    const cdataPieces = urlset(RL_MD, [`<url><loc>${'<![CDATA[pppppppppp]]>'.repeat(LIMITS.maxValueChars / 10 + 1)}</loc></url>`]);
    expect((await refusal(cdataPieces)).code).toBe('token-too-large');
  });

  it('refuses bytes that are not valid in the encoding, and unknown encodings', async () => {
    const bad = Buffer.concat([Buffer.from(header()), Buffer.from([0x3c, 0x75, 0x72, 0x6c, 0x3e, 0xff, 0xfe, 0x3c]), Buffer.from('</url></urlset>')]);
    await expect(readDocument(byteChunks(bad, 5), { url: 'u' })).rejects.toMatchObject({ code: 'encoding' });
    const cut = Buffer.from(`${header()}<url><loc>http://e.com/☃`).subarray(0, -1);
    await expect(readDocument(byteChunks(cut), { url: 'u' })).rejects.toMatchObject({ code: 'encoding' });
    const unknown = Buffer.from(header().replace('UTF-8', 'x-klingon'));
    await expect(readDocument(byteChunks(unknown), { url: 'u' })).rejects.toMatchObject({ code: 'encoding' });
  });

  it('is aborted through its signal, even while the input hangs', async () => {
    const controller = new AbortController();
    async function* hanging(): AsyncGenerator<string> {
      yield header();
      yield entryXml(1);
      await new Promise(() => {});
    }
    const reading = readDocument(hanging(), { url: 'u', signal: controller.signal, onEntry: () => controller.abort(new Error('stop')) });
    await expect(reading).rejects.toMatchObject({ code: 'aborted' });
    const pre = new AbortController();
    pre.abort();
    await expect(readDocument(byteChunks(Buffer.from(GOOD)), { url: 'u', signal: pre.signal })).rejects.toMatchObject({ code: 'aborted' });
    const later = new AbortController();
    const waiting = readDocument(hanging(), { url: 'u', signal: later.signal });
    setTimeout(() => later.abort(), 20);
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' });
  });

  it('passes errors of the input and of onEntry through unchanged, and closes the input', async () => {
    const failure = new Error('socket reset');
    async function* failing(): AsyncGenerator<string> {
      yield header();
      throw failure;
    }
    await expect(readDocument(failing(), { url: 'u' })).rejects.toBe(failure);
    let closed = false;
    async function* many(): AsyncGenerator<string> {
      try {
        yield header();
        for (let i = 0; ; i++) yield entryXml(i);
      } finally {
        closed = true;
      }
    }
    const stop = new Error('consumer stops');
    await expect(
      readDocument(many(), {
        url: 'u',
        onEntry: (e) => {
          if (e.index === 10) throw stop;
        },
      }),
    ).rejects.toBe(stop);
    expect(closed).toBe(true);
  });
});

describe('readDocument: streaming', () => {
  it('hands out 50,000 generated entries in order without holding them', async () => {
    async function* list(): AsyncGenerator<string> {
      yield header();
      for (let i = 0; i < 50_000; i += 100) {
        let batch = '';
        for (let j = i; j < i + 100; j++) batch += entryXml(j);
        yield batch;
      }
      yield '</urlset>\n';
    }
    let expected = 0;
    let outOfOrder = 0;
    const heapAt: number[] = [];
    const summary = await readDocument(list(), {
      url: 'u',
      onEntry: (entry) => {
        if (entry.index !== expected || entry.loc !== `http://example.com/res/${expected}` || entry.md.length !== String(expected)) outOfOrder++;
        expected++;
        if (entry.index === 5_000 || entry.index === 45_000) {
          gc();
          heapAt.push(process.memoryUsage().heapUsed);
        }
      },
    });
    expect(expected).toBe(50_000);
    expect(outOfOrder).toBe(0);
    // 40,000 entries held would be tens of MB.
    expect(heapAt[1] - heapAt[0]).toBeLessThan(4 * 1024 * 1024);
    expect(summary.entries).toBe(50_000);
    expect(summary.findings).toEqual([]);
  });

  it('honours backpressure: no input is read while onEntry is pending, and calls never overlap', async () => {
    let pulled = 0;
    async function* list(): AsyncGenerator<string> {
      yield header();
      for (let i = 0; i < 300; i++) {
        pulled++;
        yield entryXml(i);
      }
      yield '</urlset>';
    }
    let inFlight = 0;
    let maxInFlight = 0;
    let maxLead = 0;
    let handled = 0;
    const summary = await readDocument(list(), {
      url: 'u',
      onEntry: async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        maxLead = Math.max(maxLead, pulled - handled);
        const pulledBefore = pulled;
        await new Promise((r) => setTimeout(r, 1));
        expect(pulled).toBe(pulledBefore);
        handled++;
        inFlight--;
      },
    });
    expect(summary.entries).toBe(300);
    expect(handled).toBe(300);
    expect(maxInFlight).toBe(1);
    expect(maxLead).toBeLessThanOrEqual(2);
  });

  it('holds entries that precede the rs:md until it comes, then checks and hands them out', async () => {
    const xml = `<urlset ${NS}>\n${url('http://example.com/a')}\n${url('http://example.com/b')}\n${RL_MD}\n${UP_CAPABILITY_LIST}\n</urlset>`;
    const { summary, entries } = await read(xml);
    expect(entries.map((e) => e.loc)).toEqual(['http://example.com/a', 'http://example.com/b']);
    expect(summary.capability).toBe('resourcelist');
    expect(summary.findings.map((f) => [f.code, f.line])).toEqual([
      ['md-after-entry', 4],
      ['ln-after-entry', 5],
    ]);
  });

  it('keeps nothing of a document once it and its summary are let go (the reader keeps its last parser)', async () => {
    // One string of several MB: every value read from it is a slice of it, so anything kept would keep all of it.
    async function readOnce(): Promise<{ length: number; at: boolean }> {
      let text = header();
      for (let i = 0; i < 40_000; i++) text += entryXml(i);
      text += '</urlset>\n';
      const summary = await readDocument(chunks(text), { url: 'u' });
      // Not handed to expect(), which might hold on to it.
      return { length: text.length, at: summary.md.at === '2013-01-03T09:00:00Z' };
    }
    gc();
    const before = process.memoryUsage().heapUsed;
    expect(await readOnce()).toEqual({ length: expect.any(Number), at: true });
    // V8 keeps the subject of the last successful RegExp match (a checked value, so a slice of the text) until the
    // next one: match something else first.
    expect(/^x$/.test('x')).toBe(true);
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(2 * 1024 * 1024);
  });
});

describe('readDocumentFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rs-reader-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file, with its file: URL by default', async () => {
    const path = join(dir, 'rl.xml');
    await writeFile(path, GOOD);
    const summary = await readDocumentFile(path);
    expect(summary.url).toMatch(/^file:\/\/.*rl\.xml$/);
    expect(summary.entries).toBe(2);
    expect((await readDocumentFile(path, { url: 'http://example.com/rl.xml' })).url).toBe('http://example.com/rl.xml');
  });

  it('refuses a file over the limit without reading it, and a missing file with io', async () => {
    const path = join(dir, 'big.xml');
    await writeFile(path, GOOD);
    await expect(readDocumentFile(path, { maxBytes: 10 })).rejects.toMatchObject({ code: 'too-large' });
    await expect(readDocumentFile(join(dir, 'missing.xml'))).rejects.toMatchObject({ code: 'io' });
    await expect(readDocumentFile(dir)).rejects.toMatchObject({ code: 'io' });
  });
});
