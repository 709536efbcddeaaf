// Background deletion of dropped documents: only what no reader can see, in steps, and the file shrinks back.
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentSummary, Entry } from '../engine/documents/model.ts';
import { migrate } from './migrations.ts';
import { Purger } from './purge.ts';
import { openStore, type Store } from './store.ts';

let dir: string;
let store: Store | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-purge-'));
});
afterEach(() => {
  store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const URL_A = 'http://127.0.0.1:1/resourcelist.xml';

function entry(i: number): Entry {
  return { index: i, loc: `http://127.0.0.1:1/r/${i}/${'x'.repeat(200)}`, lastmod: undefined, changefreq: undefined, md: {}, links: [], line: i + 3 };
}

function summary(entries: number): DocumentSummary {
  return { url: URL_A, root: 'urlset', capability: 'resourcelist', isIndex: false, md: { capability: 'resourcelist' }, links: [], entries, findings: [] };
}

function fill(s: Store, count: number): void {
  const writer = s.documents.begin(URL_A);
  for (let i = 0; i < count; i++) writer.add(entry(i));
  writer.commit({ fetchedAt: 'now', summary: summary(count), bytes: 1, contentType: null, head: '' });
}

function bytes(path: string): number {
  return [path, `${path}-wal`].filter(existsSync).reduce((sum, file) => sum + statSync(file).size, 0);
}

describe('purge', () => {
  it('a replaced copy disappears at once for readers and its rows go in the background; the file shrinks back', async () => {
    const path = join(dir, 'db.sqlite');
    store = openStore(path);
    fill(store, 30_000);
    const full = bytes(path);
    fill(store, 10);
    // Readers see only the new copy straight after commit.
    expect(store.documents.query(URL_A, { offset: 0, limit: 5 })?.total).toBe(10);
    await store.purged();
    const other = new DatabaseSync(path);
    expect(other.prepare('SELECT COUNT(*) AS n FROM entries').get()).toEqual({ n: 10 });
    expect(other.prepare('SELECT COUNT(*) AS n FROM documents').get()).toEqual({ n: 1 });
    expect(other.prepare('PRAGMA freelist_count').get()).toEqual({ freelist_count: 0 });
    other.close();
    expect(full).toBeGreaterThan(5 * 1024 * 1024);
    expect(bytes(path)).toBeLessThan(1024 * 1024);
  });

  it('removing a document hides it at once and deletes its rows in the background', async () => {
    store = openStore(join(dir, 'rm.sqlite'));
    fill(store, 3_000);
    expect(store.documents.remove(URL_A)).toBe(true);
    expect(store.documents.get(URL_A)).toBeNull();
    expect(store.documents.remove(URL_A)).toBe(false);
    await store.purged();
    expect(store.documents.query(URL_A, { offset: 0, limit: 1 })).toBeNull();
  });

  it('never touches a document readers can see, even when asked to', async () => {
    const db = new DatabaseSync(':memory:');
    migrate(db, ':memory:');
    db.exec("INSERT INTO documents (id, url) VALUES (1, 'http://127.0.0.1:1/visible.xml')");
    db.exec("INSERT INTO entries (doc_id, idx, loc, entry) VALUES (1, 0, 'a', '{}'), (1, 1, 'b', '{}')");
    const purger = new Purger(db, { batchRows: 1 });
    purger.enqueue(1);
    await purger.idle();
    expect(db.prepare('SELECT COUNT(*) AS n FROM entries').get()).toEqual({ n: 2 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM documents').get()).toEqual({ n: 1 });
    db.close();
  });

  it('deletes in steps of batchRows, letting other work run between them', async () => {
    const db = new DatabaseSync(':memory:');
    migrate(db, ':memory:');
    db.exec('INSERT INTO documents (id, url) VALUES (1, NULL)');
    const insert = db.prepare("INSERT INTO entries (doc_id, idx, loc, entry) VALUES (1, ?, 'a', '{}')");
    for (let i = 0; i < 1_000; i++) insert.run(i);
    const purger = new Purger(db, { batchRows: 100 });
    purger.enqueue(1);
    const seen: number[] = [];
    const count = () => Number((db.prepare('SELECT COUNT(*) AS n FROM entries').get() as { n: number }).n);
    let done = false;
    const idle = purger.idle().then(() => (done = true));
    while (!done) {
      seen.push(count());
      await new Promise((r) => setImmediate(r));
    }
    await idle;
    expect(count()).toBe(0);
    // Several intermediate states were visible: it did not go in one statement.
    expect(new Set(seen.filter((n) => n > 0 && n < 1_000)).size).toBeGreaterThanOrEqual(5);
    db.close();
  });

  it('stops when the store closes; what is left is purged on the next open', async () => {
    const path = join(dir, 'stop.sqlite');
    store = openStore(path);
    fill(store, 20_000);
    store.documents.remove(URL_A);
    store.close();
    const db = new DatabaseSync(path);
    expect(Number((db.prepare('SELECT COUNT(*) AS n FROM entries').get() as { n: number }).n)).toBeGreaterThan(0);
    db.close();
    store = openStore(path);
    await store.purged();
    const after = new DatabaseSync(path);
    expect(after.prepare('SELECT COUNT(*) AS n FROM entries').get()).toEqual({ n: 0 });
    after.close();
  });

  it('converts a database made without auto_vacuum to INCREMENTAL once, keeping what it holds', () => {
    const path = join(dir, 'old.sqlite');
    const old = new DatabaseSync(path);
    old.exec('PRAGMA journal_mode = WAL');
    migrate(old, path);
    old.exec("INSERT INTO settings (key, value) VALUES ('kept', '\"yes\"')");
    expect(old.prepare('PRAGMA auto_vacuum').get()).toEqual({ auto_vacuum: 0 });
    old.close();
    store = openStore(path);
    store.close();
    store = undefined;
    const db = new DatabaseSync(path);
    expect(db.prepare('PRAGMA auto_vacuum').get()).toEqual({ auto_vacuum: 2 });
    expect(db.prepare("SELECT value FROM settings WHERE key = 'kept'").get()).toEqual({ value: '"yes"' });
    db.close();
  });
});
