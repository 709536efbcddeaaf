import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EntrySortKey } from '../contract/types.ts';
import { parseW3cDatetime } from '../engine/documents/datetime.ts';
import type { DocumentSummary, Entry } from '../engine/documents/model.ts';
import { ENTRY_BATCH_SIZE, likeSubstring } from './documents.ts';
import { MIGRATIONS, migrate, SCHEMA_VERSION, SchemaTooNewError } from './migrations.ts';
import { openStore, type Store } from './store.ts';

let dir: string;
let store: Store | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-store-'));
});
afterEach(() => {
  store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const URL_A = 'http://127.0.0.1:1/resourcelist.xml';

function summary(url: string, entries: number): DocumentSummary {
  return {
    url,
    root: 'urlset',
    capability: 'resourcelist',
    isIndex: false,
    md: { capability: 'resourcelist', at: '2024-01-01T00:00:00Z' },
    links: [],
    entries,
    findings: [],
  };
}

const CHANGES = ['created', 'updated', 'deleted'] as const;

/** Deterministic entries with gaps in every nullable sort key and duplicate values (to exercise ties). */
function makeEntry(i: number): Entry {
  const md: Entry['md'] = { change: CHANGES[i % 3] };
  if (i % 7 !== 0) md.length = String((i * 37) % 1000);
  if (i % 4 !== 0) md.datetime = `2024-02-${String(1 + ((i * 13) % 28)).padStart(2, '0')}T10:00:00Z`;
  const entry: Entry = {
    index: i,
    loc: `http://127.0.0.1:1/res/${(i * 7919) % 10007}${i % 11 === 0 ? '_x%' : ''}.TXT`,
    md,
    links: i % 5 === 0 ? [{ rel: 'alternate', href: `http://127.0.0.1:1/alt/${i}` }] : [],
    line: i + 3,
  };
  if (i % 6 !== 0) entry.lastmod = `2023-0${1 + (i % 9)}-15`;
  return entry;
}

function fill(s: Store, url: string, n: number): void {
  const writer = s.documents.begin(url);
  for (let i = 0; i < n; i++) writer.add(makeEntry(i));
  writer.commit({ fetchedAt: '2024-01-01T00:00:00.000Z', summary: summary(url, n), bytes: 123, contentType: 'application/xml', head: '<urlset/>' });
}

describe('migrations', () => {
  it('creates the schema, uses WAL and foreign keys, and reopening is idempotent', () => {
    const path = join(dir, 'a.sqlite');
    store = openStore(path);
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    store.close();
    store = openStore(path);
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    store.close();
    store = undefined;
    const db = new DatabaseSync(path);
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION });
    expect(migrate(db, path)).toBe(SCHEMA_VERSION);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all().map((r) => r.name);
    expect(tables).toEqual(['documents', 'entries', 'index_parts', 'mirrors', 'settings', 'sources']);
    db.close();
  });

  it('applies only pending migrations, in order, each in its own transaction', () => {
    const db = new DatabaseSync(':memory:');
    const applied: number[] = [];
    const steps = [
      (d: DatabaseSync) => {
        applied.push(1);
        d.exec('CREATE TABLE t (x INTEGER)');
      },
      (d: DatabaseSync) => {
        applied.push(2);
        d.exec('INSERT INTO t VALUES (1)');
      },
    ];
    expect(migrate(db, ':memory:', steps.slice(0, 1))).toBe(1);
    expect(migrate(db, ':memory:', steps)).toBe(2);
    expect(migrate(db, ':memory:', steps)).toBe(2);
    expect(applied).toEqual([1, 2]);
    // A failing migration leaves neither its changes nor a bumped version behind.
    const failing = [...steps, (d: DatabaseSync) => { d.exec('INSERT INTO t VALUES (2)'); throw new Error('boom'); }];
    expect(() => migrate(db, ':memory:', failing)).toThrow('boom');
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 2 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 1 });
    db.close();
  });

  it('refuses a database written by a newer version, without touching it', () => {
    const path = join(dir, 'new.sqlite');
    const db = new DatabaseSync(path);
    db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    expect(() => openStore(path)).toThrow(SchemaTooNewError);
    expect(() => openStore(path)).toThrow(/newer version/);
    const check = new DatabaseSync(path);
    expect(check.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get()).toEqual({ n: 0 });
    check.close();
  });

  it('says in plain words, naming the file, that a damaged database cannot be read, and leaves it as it was', () => {
    const path = join(dir, 'damaged.sqlite');
    const bytes = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251));
    writeFileSync(path, bytes);
    expect(() => openStore(path)).toThrow(`ResourceSync Desktop's database ${path} is damaged and cannot be read (file is not a database); nothing in it was changed.`);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    // Cut short: the same.
    const whole = join(dir, 'whole.sqlite');
    openStore(whole).close();
    truncateSync(whole, 1000);
    expect(() => openStore(whole)).toThrow(/is damaged and cannot be read \(database disk image is malformed\)/);
  });

  it('says so when another program keeps it locked, instead of "database is locked"', () => {
    const path = join(dir, 'locked.sqlite');
    openStore(path).close();
    const other = new DatabaseSync(path);
    other.exec('BEGIN EXCLUSIVE');
    other.exec("INSERT INTO settings (key, value) VALUES ('x', '1')");
    try {
      expect(() => openStore(path)).toThrow(`ResourceSync Desktop's database ${path} is being written by another program`);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  }, 20_000);

  it('opens a database made before auto_vacuum as it is when the disk has no room to convert it', () => {
    const path = join(dir, 'old-full.sqlite');
    const old = new DatabaseSync(path);
    old.exec('PRAGMA journal_mode = WAL');
    migrate(old, path);
    old.exec("INSERT INTO settings (key, value) VALUES ('kept', '\"yes\"')");
    old.close();
    // It was a VACUUM regardless, which on a nearly full disk failed ("database or disk is full"): no app at all.
    store = openStore(path, { freeBytes: () => 0 });
    store.close();
    store = undefined;
    const db = new DatabaseSync(path);
    expect(db.prepare('PRAGMA auto_vacuum').get()).toEqual({ auto_vacuum: 0 });
    expect(db.prepare("SELECT value FROM settings WHERE key = 'kept'").get()).toEqual({ value: '"yes"' });
    db.close();
    // With room, the next start converts it.
    openStore(path).close();
    const after = new DatabaseSync(path);
    expect(after.prepare('PRAGMA auto_vacuum').get()).toEqual({ auto_vacuum: 2 });
    after.close();
  });
});

describe('sources', () => {
  it('saves a Source once, by start URL or Source Description, and keeps it across reopening', () => {
    const path = join(dir, 's.sqlite');
    store = openStore(path);
    const first = store.sources.add({
      name: '127.0.0.1:1',
      startUrl: 'http://127.0.0.1:1/',
      sourceDescriptionUrl: 'http://127.0.0.1:1/.well-known/resourcesync',
      capabilityListUrls: ['http://127.0.0.1:1/capabilitylist.xml'],
    });
    expect(first.created).toBe(true);
    expect(first.source).toMatchObject({ id: 1, startUrl: 'http://127.0.0.1:1/', capabilityListUrls: ['http://127.0.0.1:1/capabilitylist.xml'] });
    const sameStart = store.sources.add({ name: 'x', startUrl: 'http://127.0.0.1:1/', sourceDescriptionUrl: null, capabilityListUrls: [] });
    expect(sameStart).toEqual({ source: first.source, created: false });
    const sameSd = store.sources.add({
      name: 'y',
      startUrl: 'http://127.0.0.1:1/other',
      sourceDescriptionUrl: 'http://127.0.0.1:1/.well-known/resourcesync',
      capabilityListUrls: [],
    });
    expect(sameSd).toEqual({ source: first.source, created: false });
    const clOnly = { name: 'z', startUrl: 'http://127.0.0.1:2/cl.xml', sourceDescriptionUrl: null, capabilityListUrls: ['http://127.0.0.1:2/cl.xml'] };
    const second = store.sources.add(clOnly);
    expect(second.created).toBe(true);
    expect(store.sources.add({ ...clOnly, startUrl: 'http://127.0.0.1:2/' }).source.id).toBe(second.source.id);
    store.close();

    store = openStore(path);
    expect(store.sources.list()).toEqual([first.source, second.source]);
    expect(store.sources.remove(first.source.id)).toBe(true);
    expect(store.sources.remove(first.source.id)).toBe(false);
    expect(store.sources.list()).toEqual([second.source]);
  });
});

describe('settings', () => {
  it('has defaults, applies partial updates, clears the token with null', () => {
    store = openStore(join(dir, 'set.sqlite'));
    expect(store.settings.get()).toEqual({ bearerToken: null, tokenOrigin: null, timeoutMs: 30_000 });
    expect(store.settings.set({ bearerToken: 'secret', tokenOrigin: 'https://example.org' })).toEqual({ bearerToken: 'secret', tokenOrigin: 'https://example.org', timeoutMs: 30_000 });
    expect(store.settings.set({ timeoutMs: 5_000 })).toEqual({ bearerToken: 'secret', tokenOrigin: 'https://example.org', timeoutMs: 5_000 });
    expect(store.settings.set({ bearerToken: null })).toEqual({ bearerToken: null, tokenOrigin: null, timeoutMs: 5_000 });
  });

  it('keeps the token sealed at rest when given a SecretBox, and survives a box that cannot open it', () => {
    const path = join(dir, 'sealed.sqlite');
    const box = {
      seal: (plain: string) => Buffer.from(`box1:${plain}`).toString('base64'),
      open: (sealed: string) => {
        const text = Buffer.from(sealed, 'base64').toString();
        if (!text.startsWith('box1:')) throw new Error('not mine');
        return text.slice(5);
      },
    };
    store = openStore(path, { secrets: box });
    expect(store.settings.set({ bearerToken: 'tok-123' }).bearerToken).toBe('tok-123');
    const raw = new DatabaseSync(path);
    const stored = String((raw.prepare("SELECT value FROM settings WHERE key = 'bearerToken'").get() as { value: string }).value);
    raw.close();
    expect(stored).not.toContain('tok-123');
    store.close();
    expect(openStore(path, { secrets: box }).settings.get().bearerToken).toBe('tok-123');
    // Without the box (rsdesk serve) or with another one, the sealed token reads as none: no crash, no garbage.
    expect(openStore(path).settings.get().bearerToken).toBeNull();
    const other = { seal: box.seal, open: () => { throw new Error('wrong keychain'); } };
    store = openStore(path, { secrets: other });
    expect(store.settings.get()).toEqual({ bearerToken: null, tokenOrigin: null, timeoutMs: 30_000 });
  });

  it('reads a token stored in clear before a SecretBox was used', () => {
    const path = join(dir, 'legacy.sqlite');
    openStore(path).settings.set({ bearerToken: 'plain' });
    store = openStore(path, { secrets: { seal: (p) => p, open: () => { throw new Error('never called'); } } });
    expect(store.settings.get().bearerToken).toBe('plain');
  });
});

describe('document cache', () => {
  it("keeps the entries' shape found while writing, and finds it for a copy cached before shapes were kept", () => {
    const path = join(dir, 's.sqlite');
    store = openStore(path);
    fill(store, URL_A, 50);
    const shape = store.documents.get(URL_A)!.shape;
    expect(shape).toEqual({ prefix: 'http://127.0.0.1:1/res/', fields: ['lastmod', 'change', 'datetime', 'length', 'links'] });
    const other = new DatabaseSync(path);
    other.prepare('UPDATE documents SET shape = NULL').run();
    expect(store.documents.get(URL_A)!.shape).toEqual(shape);
    expect(other.prepare('SELECT shape FROM documents WHERE url = ?').get(URL_A)).toEqual({ shape: JSON.stringify(shape) });
    other.close();
  });

  it('streams entries in batches, so other readers see batches land while the old copy stays current', async () => {
    const path = join(dir, 'd.sqlite');
    store = openStore(path);
    fill(store, URL_A, 10);
    const other = new DatabaseSync(path);
    const count = () => Number((other.prepare('SELECT COUNT(*) AS n FROM entries').get() as { n: number }).n);
    expect(count()).toBe(10);

    const writer = store.documents.begin(URL_A);
    for (let i = 0; i < ENTRY_BATCH_SIZE - 1; i++) writer.add(makeEntry(i));
    expect(count()).toBe(10); // nothing written until a batch is full
    writer.add(makeEntry(ENTRY_BATCH_SIZE - 1));
    expect(count()).toBe(10 + ENTRY_BATCH_SIZE); // one batch committed
    // Until commit, readers still get the old copy.
    expect(store.documents.query(URL_A, { offset: 0, limit: 100 })?.total).toBe(10);
    writer.add(makeEntry(ENTRY_BATCH_SIZE));
    const committed = writer.commit({ fetchedAt: 'now', summary: summary(URL_A, ENTRY_BATCH_SIZE + 1), bytes: 9, contentType: null, head: 'h' });
    expect(committed.summary.entries).toBe(ENTRY_BATCH_SIZE + 1);
    await store.purged();
    expect(count()).toBe(ENTRY_BATCH_SIZE + 1); // the old entries went with the old copy (in the background)
    expect(store.documents.get(URL_A)).toMatchObject({ fetchedAt: 'now', bytes: 9, contentType: null, head: 'h' });
    other.close();
  });

  it('abort drops a partial load and keeps the previous copy', () => {
    store = openStore(join(dir, 'abort.sqlite'));
    fill(store, URL_A, 5);
    const writer = store.documents.begin(URL_A);
    for (let i = 0; i < ENTRY_BATCH_SIZE + 10; i++) writer.add(makeEntry(i));
    writer.abort();
    writer.abort();
    expect(() => writer.add(makeEntry(0))).toThrow(/aborted/);
    expect(store.documents.query(URL_A, { offset: 0, limit: 10 })?.total).toBe(5);
  });

  it('drops loads left unfinished by a crash when the store is opened again', async () => {
    const path = join(dir, 'crash.sqlite');
    store = openStore(path);
    const writer = store.documents.begin(URL_A);
    for (let i = 0; i < ENTRY_BATCH_SIZE; i++) writer.add(makeEntry(i));
    store.close();
    store = openStore(path);
    await store.purged();
    const db = new DatabaseSync(path);
    expect(db.prepare('SELECT COUNT(*) AS n FROM entries').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM documents').get()).toEqual({ n: 0 });
    db.close();
  });

  it('keeps at most its bound in bytes, dropping the least recently used documents first', async () => {
    const path = join(dir, 'bound.sqlite');
    store = openStore(path, { documentCacheBytes: 1000 });
    const put = (url: string, bytes: number) => {
      const writer = store!.documents.begin(url);
      writer.add(makeEntry(0));
      writer.commit({ fetchedAt: new Date().toISOString(), summary: summary(url, 1), bytes, contentType: null, head: '' });
    };
    const cached = () => ['a', 'b', 'c', 'd', 'e'].filter((u) => store!.documents.query(`http://127.0.0.1:1/${u}.xml`, { offset: 0, limit: 1 }) !== null);
    const at = (u: string) => `http://127.0.0.1:1/${u}.xml`;
    put(at('a'), 300);
    put(at('b'), 300);
    put(at('c'), 300);
    // `cached()` uses them in order; a is used once more, which leaves b the least recently used.
    expect(cached()).toEqual(['a', 'b', 'c']);
    store.documents.get(at('a'));
    put(at('d'), 300);
    expect(cached()).toEqual(['a', 'c', 'd']);
    // One larger than the bound stays (it was just fetched); every other goes.
    put(at('e'), 1500);
    expect(cached()).toEqual(['e']);
    // The dropped documents' rows go too, in the background.
    await store.purged();
    const db = new DatabaseSync(path);
    expect(db.prepare('SELECT COUNT(*) AS n FROM entries').get()).toEqual({ n: 1 });
    db.close();
  });

  it('returns null for a document that is not cached', () => {
    store = openStore(':memory:');
    expect(store.documents.get(URL_A)).toBeNull();
    expect(store.documents.query(URL_A, { offset: 0, limit: 1 })).toBeNull();
    expect(store.documents.entry(URL_A, 0)).toBeNull();
  });

  it('keeps entries exactly as streamed', () => {
    store = openStore(':memory:');
    fill(store, URL_A, 30);
    for (const i of [0, 5, 11, 29]) expect(store.documents.entry(URL_A, i)).toEqual(makeEntry(i));
    expect(store.documents.entry(URL_A, 30)).toBeUndefined();
    expect([...store.documents.iterate(URL_A)]).toEqual(Array.from({ length: 30 }, (_, i) => makeEntry(i)));
  });

  it('escapes LIKE wildcards in the URI filter', () => {
    expect(likeSubstring('a_b%c\\d')).toBe('%a\\_b\\%c\\\\d%');
  });

  describe('filter, sort and paging match a plain JavaScript reference', () => {
    const N = 5_003;
    const all = Array.from({ length: N }, (_, i) => makeEntry(i));

    function keyOf(e: Entry, sort: EntrySortKey): number | string | null {
      switch (sort) {
        case 'index':
          return e.index;
        case 'loc':
          return e.loc;
        case 'lastmod':
          return e.lastmod === undefined ? null : parseW3cDatetime(e.lastmod);
        case 'datetime':
          return e.md.datetime === undefined ? null : parseW3cDatetime(e.md.datetime);
        case 'length':
          return e.md.length === undefined ? null : Number(e.md.length);
      }
    }

    function reference(q: { uri?: string; change?: string; sort: EntrySortKey; descending: boolean }): number[] {
      const rows = all.filter(
        (e) => (!q.uri || e.loc.toLowerCase().includes(q.uri.toLowerCase())) && (!q.change || e.md.change === q.change),
      );
      const valued = rows.filter((e) => keyOf(e, q.sort) !== null);
      const nulls = rows.filter((e) => keyOf(e, q.sort) === null);
      const dir = q.descending ? -1 : 1;
      valued.sort((a, b) => {
        const ka = keyOf(a, q.sort)!;
        const kb = keyOf(b, q.sort)!;
        if (ka < kb) return -dir;
        if (ka > kb) return dir;
        return (a.index - b.index) * dir;
      });
      nulls.sort((a, b) => (a.index - b.index) * dir);
      return [...valued, ...nulls].map((e) => e.index);
    }

    const cases: { uri?: string; change?: string }[] = [{}, { uri: '_X%' }, { change: 'deleted' }, { uri: '12', change: 'created' }, { uri: 'nothing-matches' }];
    for (const filter of cases) {
      for (const sort of ['index', 'loc', 'lastmod', 'datetime', 'length'] as const) {
        for (const descending of [false, true]) {
          it(`${JSON.stringify(filter)} sort=${sort} descending=${descending}`, () => {
            store = openStore(join(dir, 'q.sqlite'));
            fill(store, URL_A, N);
            const expected = reference({ ...filter, sort, descending });
            // Pages that straddle the boundary between valued and null keys must join up exactly.
            const pageSize = 977;
            const got: number[] = [];
            for (let offset = 0; offset < expected.length + pageSize; offset += pageSize) {
              const page = store.documents.query(URL_A, { offset, limit: pageSize, ...filter, sort, descending })!;
              expect(page.total).toBe(N);
              expect(page.matched).toBe(expected.length);
              expect(page.offset).toBe(offset);
              got.push(...page.rows.map((r) => r.index));
            }
            expect(got).toEqual(expected);
            const deep = store.documents.query(URL_A, { offset: Math.max(0, expected.length - 3), limit: 10, ...filter, sort, descending })!;
            expect(deep.rows.map((r) => r.index)).toEqual(expected.slice(Math.max(0, expected.length - 3)));
          });
        }
      }
    }
  });
});
