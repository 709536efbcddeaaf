// The live engine's pure parts: signatures, Content-Type, the sequencer, payloads.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../documents/model.ts';
import { requestUri } from '../mirror/uri.ts';
import { collapse } from './apply-live.ts';
import { classifyBody, parseContentType } from './content-type.ts';
import { readNotification, type Notification } from './payload.ts';
import { Sequencer } from './sequencer.ts';
import { checkSignature, signBody } from './signature.ts';

describe('X-Hub-Signature', () => {
  const body = Buffer.from('<urlset/>');
  it('accepts every method WebSub names, and nothing else', () => {
    for (const method of ['sha1', 'sha256', 'sha384', 'sha512'] as const) {
      expect(checkSignature(signBody(method, 's', body), 's', body)).toEqual({ ok: true, method });
      expect(checkSignature(`${method.toUpperCase()}=${createHmac(method, 's').update(body).digest('hex').toUpperCase()}`, 's', body).ok).toBe(true);
    }
    expect(checkSignature(`md5=${createHmac('md5', 's').update(body).digest('hex')}`, 's', body)).toMatchObject({ ok: false, reason: expect.stringContaining('not one of') });
  });
  it('refuses a missing, malformed, short or wrong signature', () => {
    expect(checkSignature(undefined, 's', body).ok).toBe(false);
    expect(checkSignature('sha256', 's', body).ok).toBe(false);
    expect(checkSignature('sha256=abc', 's', body).ok).toBe(false);
    expect(checkSignature(signBody('sha256', 'other', body), 's', body)).toMatchObject({ ok: false, reason: expect.stringContaining('does not match') });
    expect(checkSignature(signBody('sha256', 's', Buffer.from('<urlset />')), 's', body).ok).toBe(false);
  });
});

describe('Content-Type', () => {
  it('parses parameters, quoted or not', () => {
    expect(parseContentType('Application/XML; charset="utf-8"; x=1')).toEqual({ essence: 'application/xml', params: { charset: 'utf-8', x: '1' } });
    expect(parseContentType('nonsense')).toBeNull();
  });
  it('sniffs when the type is missing or generic, refuses other types and XML types with non-XML bytes', () => {
    const xml = Buffer.from('\uFEFF  <?xml version="1.0"?><urlset/>');
    expect(classifyBody(undefined, xml)).toMatchObject({ xml: true, sniffed: true });
    expect(classifyBody('application/octet-stream', xml)).toMatchObject({ xml: true, sniffed: true });
    expect(classifyBody('application/rss+xml', xml)).toMatchObject({ xml: true, sniffed: false });
    expect(classifyBody('text/html', xml)).toMatchObject({ xml: false });
    expect(classifyBody('application/xml', Buffer.from('hello'))).toMatchObject({ xml: false });
  });
});

describe('Sequencer', () => {
  const n = (from: number, until: number, item = `${from}-${until}`) => ({ fromMs: from, untilMs: until, item });
  it('takes consecutive intervals at once, holds one that comes early until its predecessor arrives', () => {
    const s = new Sequencer<string>(null);
    expect(s.add(n(0, 10))).toEqual([{ kind: 'take', items: [n(0, 10)], coveredBeforeMs: null }]);
    expect(s.add(n(20, 30))).toEqual([]);
    expect(s.waiting).toBe(1);
    expect(s.add(n(10, 20))).toEqual([{ kind: 'take', items: [n(10, 20), n(20, 30)], coveredBeforeMs: 10 }]);
    expect(s.cursor).toBe(30);
  });
  it('reports a gap when the wait is over, then goes on', () => {
    const s = new Sequencer<string>(10);
    s.add(n(20, 30));
    s.add(n(30, 40));
    expect(s.expire()).toEqual([
      { kind: 'gap', fromMs: 10, untilMs: 20 },
      { kind: 'take', items: [n(20, 30), n(30, 40)], coveredBeforeMs: 20 },
    ]);
    expect(s.waitingSince).toBeNull();
  });
  it('drops what lies wholly before the cursor and takes an overlap with the covered part marked', () => {
    const s = new Sequencer<string>(100);
    expect(s.add(n(50, 90))).toEqual([{ kind: 'covered', item: n(50, 90) }]);
    expect(s.add(n(90, 120))).toEqual([{ kind: 'take', items: [n(90, 120)], coveredBeforeMs: 100 }]);
  });
  it('takes 20,000 intervals that arrive in reverse in from order, equal intervals in arrival order, once the first arrives', () => {
    const s = new Sequencer<string>(0);
    const count = 20_000;
    for (let i = count - 1; i >= 1; i--) {
      expect(s.add(n(i * 10, i * 10 + 10, `a${i}`))).toEqual([]);
      // A second copy of some intervals, which must follow the first in what is taken.
      if (i % 1000 === 0) s.add(n(i * 10, i * 10 + 10, `b${i}`));
    }
    expect(s.waiting).toBe(count - 1 + 19);
    const steps = s.add(n(0, 10, 'a0'));
    expect(steps).toHaveLength(1);
    const items = (steps[0] as { items: { item: string }[] }).items.map((x) => x.item);
    const expected: string[] = [];
    for (let i = 0; i < count; i++) expected.push(`a${i}`, ...(i % 1000 === 0 && i > 0 ? [`b${i}`] : []));
    expect(items).toEqual(expected);
    expect(s.waiting).toBe(0);
    expect(s.cursor).toBe(count * 10);
  });
});

describe('change-notification payloads', () => {
  const doc = (md: string, entries = '') =>
    Buffer.from(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"><rs:md ${md}/>${entries}</urlset>`);
  it('reads from, until and the changes', async () => {
    const r = await readNotification(doc('capability="change-notification" from="2025-01-01T00:00:00Z" until="2025-01-01T00:10:00Z"', '<url><loc>http://x/a</loc><rs:md change="deleted" datetime="2025-01-01T00:01:00Z"/></url>'), 't');
    expect(r).toMatchObject({ ok: true, notification: { from: '2025-01-01T00:00:00Z', changes: [{ uri: 'http://x/a', change: 'deleted' }] } });
  });
  it('refuses another capability, a missing until, until before from', async () => {
    expect(await readNotification(doc('capability="changelist" from="2025-01-01T00:00:00Z"'), 't')).toMatchObject({ ok: false, reason: expect.stringContaining('"changelist"') });
    expect(await readNotification(doc('capability="change-notification" from="2025-01-01T00:00:00Z"'), 't')).toMatchObject({ ok: false, reason: expect.stringContaining('until') });
    expect(await readNotification(doc('capability="change-notification" from="2025-01-02T00:00:00Z" until="2025-01-01T00:00:00Z"'), 't')).toMatchObject({ ok: false, reason: expect.stringContaining('before') });
    expect(await readNotification(Buffer.from('not xml'), 't')).toMatchObject({ ok: false });
  });
  it('reads a notification whose entries break an entry-level MUST (order, datetime out of range, a link without href): the faults are findings', async () => {
    const md = 'capability="change-notification" from="2025-01-01T00:00:00Z" until="2025-01-01T00:10:00Z"';
    const entries =
      '<url><loc>http://x/b</loc><rs:md change="updated" datetime="2025-01-01T00:05:00Z"/><rs:ln rel="duplicate"/></url>' +
      '<url><loc>http://x/a</loc><rs:md change="updated" datetime="2025-01-01T00:01:00Z"/></url>' +
      '<url><loc>http://x/c</loc><rs:md change="created" datetime="2025-01-01T00:20:00Z"/></url>';
    const r = await readNotification(doc(md, entries), 't');
    expect(r.ok).toBe(true);
    const codes = r.ok ? r.notification.findings.map((f) => `${f.severity} ${f.code}`) : [];
    expect(codes).toEqual(['error invalid-link', 'error change-order', 'error datetime-out-of-range']);
    expect(r.ok && r.notification.changes.map((c) => c.uri)).toEqual(['http://x/b', 'http://x/a', 'http://x/c']);
  });
});

describe('collapse (what a batch applies)', () => {
  const n = (changes: [string, string, number][]): Notification => ({
    from: '',
    until: '',
    fromMs: 0,
    untilMs: 0,
    up: null,
    findings: [],
    changes: changes.map(([uri, change, ms]) => ({ uri, change, datetime: new Date(ms).toISOString(), ms, entry: { loc: uri, md: {}, ln: [] } as unknown as Entry })),
  });
  it('keeps the last change per URI in datetime order, leaving out what was covered before the batch', () => {
    const items = [
      { inboxId: 1, notification: n([['http://x/a', 'created', 10], ['http://x/b', 'updated', 12]]) },
      { inboxId: 2, notification: n([['http://x/a', 'deleted', 20], ['http://x/c', 'updated', 5]]) },
    ];
    expect(collapse(items, 8).map((c) => [c.uri, c.change])).toEqual([['http://x/b', 'updated'], ['http://x/a', 'deleted']]);
    expect(collapse(items, null).map((c) => c.uri)).toEqual(['http://x/c', 'http://x/b', 'http://x/a']);
  });
  it('leaves out, for a notification that joined the batch later, what was covered when it was taken', () => {
    const items = [
      { inboxId: 1, notification: n([['http://x/a', 'updated', 10]]) },
      // Taken once the cursor was at 30: its change at 25 was covered by then (as if applied in a batch of its own).
      { inboxId: 2, notification: n([['http://x/b', 'deleted', 25], ['http://x/c', 'updated', 35]]), coveredBeforeMs: 30 },
    ];
    expect(collapse(items, 0).map((c) => c.uri)).toEqual(['http://x/a', 'http://x/c']);
  });
  it("keys a change by the mirror's form of its URI, and requests it as the Source spelled it", () => {
    const items = [{ inboxId: 1, notification: n([['http://x/~user/a', 'created', 10], ['HTTP://x:80/%7euser/a', 'updated', 20]]) }];
    const applied = collapse(items, null);
    expect(applied.map((c) => [c.uri, c.change, c.entry.loc])).toEqual([['http://x/~user/a', 'updated', 'http://x/~user/a']]);
    // A server that checks escapes as written (signed URLs) may refuse `/~user/a` for `/%7euser/a`.
    expect(requestUri(applied[0].entry)).toBe('http://x/%7euser/a');
    // The notification as received stays as it was.
    expect(items[0].notification.changes[1].entry.loc).toBe('HTTP://x:80/%7euser/a');
  });
});
