import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { audit } from './audit.ts';
import { MIRROR_MIGRATIONS, MirrorState, STATE_FILE, stateDirOf } from './state.ts';
import { sync } from './sync.ts';
import { canonicalUri } from './uri.ts';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe('canonicalUri', () => {
  it('writes a URI as a URL parser does: one form for the spellings of one URI', () => {
    const forms = [
      'http://example.org/a/b?x=1',
      'HTTP://Example.ORG/a/b?x=1',
      'http://example.org:80/a/b?x=1',
      'http://example.org/a/./c/../b?x=1',
      'http://example.org/a/b?x=1#part',
    ];
    for (const form of forms) expect(canonicalUri(form), form).toBe('http://example.org/a/b?x=1');
    expect(canonicalUri('https://example.org:443')).toBe('https://example.org/');
    expect(canonicalUri('http://example.org:8080/')).toBe('http://example.org:8080/');
  });

  it('normalizes percent-escapes (RFC 3986 §6.2.2): unreserved characters decoded, hex digits in upper case', () => {
    for (const form of ['http://example.org/~user/a%2Fb', 'http://example.org/%7Euser/a%2fb', 'http://example.org/%7euser/a%2Fb', 'HTTP://Example.org:80/%7Euser/a%2fb']) {
      expect(canonicalUri(form), form).toBe('http://example.org/~user/a%2Fb');
    }
    expect(canonicalUri('http://example.org/%41%62c%2D%2e%5F%30?q=%7e%26%3d')).toBe('http://example.org/Abc-._0?q=~%26%3D');
    // Decoded dots are dot segments to a URL parser already: resolved before, never made by the decoding.
    expect(canonicalUri('http://example.org/a/%2E%2e/b')).toBe('http://example.org/b');
    expect(canonicalUri('http://example.org/caf\u00e9 au lait')).toBe('http://example.org/caf%C3%A9%20au%20lait');
    expect(canonicalUri('http://example.org/caf%c3%a9')).toBe('http://example.org/caf%C3%A9');
    // A `%` not followed by two hex digits stays (the parser leaves it).
    expect(canonicalUri('http://example.org/100%')).toBe('http://example.org/100%');
    for (const uri of ['http://example.org/%7euser/x?q=%2f', 'http://example.org/a/%2E%2e/b']) expect(canonicalUri(canonicalUri(uri))).toBe(canonicalUri(uri));
  });

  it('returns a URI in that form already as it is, whatever came before', () => {
    const plain = 'http://127.0.0.1:8080/res/1.txt';
    expect(canonicalUri(plain)).toBe(plain);
    expect(canonicalUri('http://127.0.0.1:8080/res/./2.txt')).toBe('http://127.0.0.1:8080/res/2.txt');
    expect(canonicalUri('http://127.0.0.1:8080/res/..')).toBe('http://127.0.0.1:8080/');
    expect(canonicalUri('http://127.0.0.1:8080/a?q=%41')).toBe('http://127.0.0.1:8080/a?q=A');
    expect(canonicalUri("http://127.0.0.1:8080/a?q='x'")).toBe('http://127.0.0.1:8080/a?q=%27x%27');
    expect(canonicalUri('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/');
    expect(canonicalUri('http://127.0.0.1:80801/x')).toBe('http://127.0.0.1:80801/x');
  });

  it('leaves what is no http(s) URL to be refused as it was written', () => {
    for (const bad of ['', 'not a uri', 'ftp://example.org/a', '/relative/path', 'http://exa mple.org/']) expect(canonicalUri(bad)).toBe(bad);
  });
});

describe('a Source that spells one URI several ways', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('gets one row and one file for it, in a baseline and in the changes after it, and the audit agrees', async () => {
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    let a = 'a, first\n';
    const changes: string[] = [];
    server = createServer((req, res) => {
      const port = (server.address() as AddressInfo).port;
      const base = `http://127.0.0.1:${port}`;
      const docs: Record<string, string> = {
        '/cap.xml': `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`,
        '/rl.xml':
          `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>` +
          `<url><loc>${base}/a</loc><rs:md hash="md5:${md5(a)}"/></url>` +
          `<url><loc>HTTP://127.0.0.1:${port}/b/../a#top</loc><rs:md hash="md5:${md5(a)}"/></url>` +
          `<url><loc>${base}/c</loc><rs:md hash="md5:${md5('c\n')}"/></url></urlset>`,
        '/cl.xml': `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>${changes.join('')}</urlset>`,
      };
      const path = req.url ?? '/';
      if (docs[path]) return void res.writeHead(200, { 'content-type': 'application/xml' }).end(docs[path]);
      if (path === '/a') return void res.end(a);
      if (path === '/c') return void res.end('c\n');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const dest = mkdtempSync(join(tmpdir(), 'mirror-spellings-'));
    const notes: string[] = [];
    const run = () => sync({ url: `http://127.0.0.1:${port}/cap.xml`, dest, timeoutMs: 5_000, proxyEnv: {}, onNote: (n) => void notes.push(n) });

    expect(await run()).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    expect(notes.join('\n')).toMatch(/1 entry repeats a URI listed before/);
    const host = join(dest, `127.0.0.1_${port}`);
    expect(readdirSync(host).sort()).toEqual(['a', 'c']);

    // The Change List writes it with a dot segment.
    a = 'a, second\n';
    changes.push(`<url><loc>http://127.0.0.1:${port}/./a</loc><rs:md change="updated" datetime="2024-01-02T00:00:00Z" hash="md5:${md5(a)}"/></url>`);
    expect(await run()).toMatchObject({ mode: 'incremental', created: 0, updated: 1, failed: 0 });
    expect(readdirSync(host).sort()).toEqual(['a', 'c']);
    expect(readFileSync(join(host, 'a'), 'utf8')).toBe(a);
    const state = new MirrorState(stateDirOf(dest));
    expect([...state.rows()].map((r) => r.uri).sort()).toEqual([`http://127.0.0.1:${port}/a`, `http://127.0.0.1:${port}/c`]);
    state.close();
    expect((await audit({ dest, proxyEnv: {} })).inSync).toBe(true);
  });
});

describe('a Source that spells one URI with other percent-escapes', () => {
  let server: Server;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  it('gets one download, row and file; a change or deletion in another spelling reaches it; requests keep the spelling', async () => {
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const bodies = new Map([['/~u/a', 'a\n'], ['/~u/b', 'b, first\n']]);
    let rl = '';
    let cl = '';
    const asked: string[] = [];
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/cap.xml') return void res.end(`<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base()}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base()}/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`);
      if (path === '/rl.xml') return void res.end(`<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>${rl}</urlset>`);
      if (path === '/cl.xml') return void res.end(`<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/>${cl}</urlset>`);
      if (path.startsWith('/~u/') || path.startsWith('/%7')) asked.push(path);
      // As a server does: one resource for every spelling.
      const body = bodies.get(decodeURIComponent(path));
      if (body === undefined) return void res.writeHead(404).end();
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const base = () => `http://127.0.0.1:${port}`;
    const entry = (loc: string, md: string) => `<url><loc>${loc}</loc><rs:md ${md}/></url>`;
    rl =
      entry(`${base()}/~u/a`, `hash="md5:${md5('a\n')}"`) +
      entry(`${base()}/%7Eu/a`, `hash="md5:${md5('a\n')}"`) +
      entry(`HTTP://127.0.0.1:${port}/%7eu/b`, `hash="md5:${md5('b, first\n')}"`);
    const dest = mkdtempSync(join(tmpdir(), 'mirror-escapes-'));
    const run = () => sync({ url: `${base()}/cap.xml`, dest, timeoutMs: 5_000, proxyEnv: {}, deletePolicy: 'delete' });
    const rows = () => {
      const state = new MirrorState(stateDirOf(dest));
      try {
        return [...state.rows()].filter((r) => r.status !== 'deleted').map((r) => [r.uri, r.path]);
      } finally {
        state.close();
      }
    };
    const host = join(dest, `127.0.0.1_${port}`, '~u');

    expect(await run()).toMatchObject({ mode: 'baseline', created: 2, failed: 0 });
    expect(readdirSync(host).sort()).toEqual(['a', 'b']);
    expect(rows().sort()).toEqual([
      [`${base()}/~u/a`, `127.0.0.1_${port}/~u/a`],
      [`${base()}/~u/b`, `127.0.0.1_${port}/~u/b`],
    ]);
    // Each once, as the Source wrote it.
    expect(asked).toEqual(['/~u/a', '/%7eu/b']);

    // Updated under another spelling than the baseline's: the same copy is updated.
    bodies.set('/~u/b', 'b, second\n');
    cl = entry(`${base()}/%7Eu/b`, `change="updated" datetime="2024-01-02T00:00:00Z" hash="md5:${md5('b, second\n')}"`);
    asked.length = 0;
    expect(await run()).toMatchObject({ mode: 'incremental', created: 0, updated: 1, failed: 0 });
    expect(asked).toEqual(['/%7Eu/b']);
    expect(readdirSync(host).sort()).toEqual(['a', 'b']);
    expect(readFileSync(join(host, 'b'), 'utf8')).toBe('b, second\n');

    // Deleted under a third: the copy goes.
    cl += entry(`${base()}/~u/b`, 'change="deleted" datetime="2024-01-03T00:00:00Z"');
    expect(await run()).toMatchObject({ mode: 'incremental', deleted: 1, failed: 0 });
    expect(readdirSync(host)).toEqual(['a']);
    expect(rows()).toEqual([[`${base()}/~u/a`, `127.0.0.1_${port}/~u/a`]]);
  });
});

describe('the mirror migration to these forms', () => {
  it('gives rows kept under other percent-escapes the normalized form (migration 11), unless a row has it already', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'escapes-')), '.resourcesync');
    mkdirSync(dir);
    const db = new DatabaseSync(join(dir, STATE_FILE));
    for (const migration of MIRROR_MIGRATIONS.slice(0, 10)) migration(db);
    db.exec('PRAGMA user_version = 10');
    const row = db.prepare("INSERT INTO inventory (uri, path, path_key, status) VALUES (?, ?, ?, 'verified')");
    row.run('http://example.org/%7eu/a', 'example.org/~u/a', 'example.org/~u/a');
    row.run('http://example.org/~u/b', 'example.org/~u/b', 'example.org/~u/b');
    row.run('http://example.org/%7Eu/b', 'example.org/~u/b%~2', 'example.org/~u/b%~2');
    row.run('http://example.org/c?x=%2f', 'example.org/c%qx=%252f', 'example.org/c%qx=%252f');
    db.prepare('INSERT INTO described_by (uri, describes) VALUES (?, ?)').run('http://example.org/c?x=%2f', 'http://example.org/%7eu/a');
    db.close();
    const state = new MirrorState(dir);
    try {
      expect([...state.rows()].map((r) => [r.uri, r.path]).sort()).toEqual([
        ['http://example.org/%7Eu/b', 'example.org/~u/b%~2'],
        ['http://example.org/c?x=%2F', 'example.org/c%qx=%252f'],
        ['http://example.org/~u/a', 'example.org/~u/a'],
        ['http://example.org/~u/b', 'example.org/~u/b'],
      ]);
      expect(state.db.prepare('SELECT uri, describes FROM described_by').all()).toEqual([{ uri: 'http://example.org/c?x=%2F', describes: 'http://example.org/~u/a' }]);
    } finally {
      state.close();
    }
  });


  it('gives failures, retried URIs and metadata links kept under another spelling the form too (migration 14), so a later run settles them', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'escapes-')), '.resourcesync');
    mkdirSync(dir);
    const db = new DatabaseSync(join(dir, STATE_FILE));
    for (const migration of MIRROR_MIGRATIONS.slice(0, 10)) migration(db);
    db.exec('PRAGMA user_version = 10');
    const run = db.prepare("INSERT INTO runs (id, kind, mode, started_at, status) VALUES (?, 'baseline', ?, '2026-01-01T00:00:00Z', 'failed')");
    run.run(1, 'auto');
    run.run(2, 'retry');
    // A baseline that failed for `%7eu/a` and `HTTP://Example.org:80/b`, and a retry of them that was interrupted.
    const failure = db.prepare("INSERT INTO failures (run_id, uri, reason) VALUES (?, ?, 'HTTP 503')");
    for (const uri of ['http://example.org/%7eu/a', 'HTTP://Example.org:80/b']) failure.run(1, uri);
    const item = db.prepare('INSERT INTO retry_items (run_id, of_run, uri) VALUES (2, 1, ?)');
    for (const uri of ['http://example.org/%7eu/a', 'http://example.org/%7Eu/a', 'HTTP://Example.org:80/b']) item.run(uri);
    // Metadata `m` of a resource it was linked to under two spellings; the resource's row under one of them.
    db.prepare("INSERT INTO inventory (uri, path, path_key, status, run_id) VALUES (?, ?, ?, 'verified', 1)").run('http://example.org/%7eu/c', 'example.org/~u/c', 'example.org/~u/c');
    const link = db.prepare("INSERT INTO described_by (uri, describes) VALUES ('http://example.org/m', ?)");
    for (const uri of ['http://example.org/%7eu/c', 'http://example.org/~u/c']) link.run(uri);
    db.close();
    const state = new MirrorState(dir);
    try {
      expect(state.failures(1).map((f) => f.uri)).toEqual(['http://example.org/~u/a', 'http://example.org/b']);
      expect(state.retryLeft(2)).toEqual({ ofRun: 1, ofRuns: [1], asked: 2, uris: ['http://example.org/b', 'http://example.org/~u/a'] });
      expect(state.db.prepare('SELECT uri, describes FROM described_by').all()).toEqual([{ uri: 'http://example.org/m', describes: 'http://example.org/~u/c' }]);
      // A later run mirrors both: the failures stand no more, and the interrupted retry has nothing left.
      state.db.prepare("INSERT INTO runs (id, kind, mode, started_at, status) VALUES (3, 'baseline', 'retry', '2026-01-02T00:00:00Z', 'completed')").run();
      const row = state.db.prepare("INSERT INTO inventory (uri, path, path_key, status, run_id) VALUES (?, ?, ?, 'verified', 3)");
      row.run('http://example.org/~u/a', 'example.org/~u/a', 'example.org/~u/a');
      row.run('http://example.org/b', 'example.org/b', 'example.org/b');
      expect(state.failuresSince(1, 10)).toMatchObject({ total: 2, open: 0 });
      expect(state.retryLeft(2)!.uris).toEqual([]);
    } finally {
      state.close();
    }
  });

  it('gives rows kept under another spelling this form, unless a row has it already', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'spellings-')), '.resourcesync');
    mkdirSync(dir);
    const db = new DatabaseSync(join(dir, STATE_FILE));
    for (const migration of MIRROR_MIGRATIONS.slice(0, 8)) migration(db);
    db.exec('PRAGMA user_version = 8');
    const row = db.prepare("INSERT INTO inventory (uri, path, path_key, status) VALUES (?, ?, ?, 'verified')");
    row.run('HTTP://Example.org:80/a', 'example.org/a', 'example.org/a');
    row.run('http://example.org/b', 'example.org/b', 'example.org/b');
    row.run('http://example.org/./b', 'example.org/b%~2', 'example.org/b%~2');
    row.run('http://example.org/c', 'example.org/c', 'example.org/c');
    db.prepare('INSERT INTO described_by (uri, describes) VALUES (?, ?)').run('http://example.org/c', 'HTTP://Example.org:80/a');
    db.close();
    const state = new MirrorState(dir);
    try {
      expect([...state.rows()].map((r) => [r.uri, r.path]).sort()).toEqual([
        ['http://example.org/./b', 'example.org/b%~2'],
        ['http://example.org/a', 'example.org/a'],
        ['http://example.org/b', 'example.org/b'],
        ['http://example.org/c', 'example.org/c'],
      ]);
      expect(state.db.prepare('SELECT uri, describes FROM described_by').all()).toEqual([{ uri: 'http://example.org/c', describes: 'http://example.org/a' }]);
    } finally {
      state.close();
    }
  });
});
