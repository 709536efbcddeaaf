// JSON Patch links of Change List entries against the fixture Source: a patch applied instead of a full fetch (and
// checked against the change's hash), every way it can fail falling back to the full fetch with a note, and a patch
// of another type not applied.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync, type SyncOptions } from './sync.ts';

let fixture: FixtureSource;
let dest: string;
let notes: string[];

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 30, changeListSize: 100 });
  dest = mkdtempSync(join(tmpdir(), 'mirror-patch-'));
  notes = [];
});
afterEach(async () => {
  await fixture.close();
});

const run = (options: Partial<SyncOptions> = {}) =>
  sync({ url: fixture.url + fixture.paths.dataset1.capabilityList, dest, batchSize: 7, timeoutMs: 5_000, onNote: (n) => void notes.push(n), ...options });
const host = () => new URL(fixture.url).host.replace(':', '_');
const fileOf = (id: number) => join(dest, host(), ...fixture.state.pathOf(id).split('/').filter(Boolean));
const patchPath = (id: number, v: number) => `/dataset1/patches/${id}/v${v}.json-patch`;
let mark = 0;
const requested = (path: string) => fixture.requests.slice(mark).filter((r) => r.path === path).length;

/** Rewrites a local copy and its inventory row alike (so the mirror takes it for the copy it recorded). */
function rewriteLocal(id: number, body: string): void {
  writeFileSync(fileOf(id), body);
  const state = new MirrorState(stateDirOf(dest));
  const hash = (a: string) => createHash(a).update(body).digest('hex');
  state.db.prepare('UPDATE inventory SET md5 = ?, sha256 = ?, length = ? WHERE uri = ?').run(hash('md5'), hash('sha256'), Buffer.byteLength(body), fixture.state.locOf(id));
  state.close();
}

describe('JSON Patch', () => {
  it('patches JSON resources it holds, checked against the hash, and fetches whole whenever that does not work', async () => {
    await run();
    // JSON resources are those with id % 3 === 1; resource 3 is text with a patch of another type.
    fixture.change('update', 1, 1);
    fixture.change('update', 2, 4); // the patch to v3 tests for v2: the mirror holds v1
    fixture.change('update', 1, 7);
    fixture.setBroken(patchPath(7, 2), { status: 404 });
    fixture.change('update', 1, 13);
    fixture.change('update', 1, 16);
    fixture.change('update', 1, 3);
    // Resource 13's copy is written with indentation: the patched copy is written out in the style that matches.
    const v13 = JSON.parse(readFileSync(fileOf(13), 'utf8')) as Record<string, unknown>;
    rewriteLocal(13, JSON.stringify(v13, null, 2) + '\n');
    // Resource 16's copy says something else than the Source's: patched, it cannot match the change's hash.
    const v16 = JSON.parse(readFileSync(fileOf(16), 'utf8')) as Record<string, unknown>;
    rewriteLocal(16, JSON.stringify({ ...v16, dataset: 'tampered' }) + '\n');

    mark = fixture.requests.length;
    const dry = await run({ dryRun: true });
    expect(dry).toMatchObject({ mode: 'incremental', updated: 6, patched: 0 });
    expect(requested(patchPath(1, 2))).toBe(0);

    mark = fixture.requests.length;
    const result = await run();
    expect(result).toMatchObject({ mode: 'incremental', updated: 6, failed: 0, patched: 2 });
    for (const r of fixture.state.live()) {
      expect(readFileSync(fileOf(r.id)).equals(fixture.state.representation(r.id, r.version).body), `resource ${r.id}`).toBe(true);
    }
    // Patched: the patch fetched, the resource not.
    for (const id of [1, 13]) {
      expect(requested(patchPath(id, 2))).toBe(1);
      expect(requested(fixture.state.pathOf(id))).toBe(0);
    }
    // Fetched whole, each with its reason.
    for (const id of [4, 7, 16, 3]) expect(requested(fixture.state.pathOf(id)), `resource ${id}`).toBe(1);
    const said = notes.join('\n');
    expect(said).toMatch(new RegExp(`${fixture.state.pathOf(4)}: the JSON Patch .* was not applied \\(it does not apply to the local copy: .*\\); fetched whole instead`));
    expect(said).toMatch(new RegExp(`${fixture.state.pathOf(7)}: the JSON Patch .* was not applied \\(HTTP 404\\); fetched whole instead`));
    expect(said).toMatch(new RegExp(`${fixture.state.pathOf(16)}: the JSON Patch .* was not applied \\(the patched copy does not match the change's hash and length\\)`));
    expect(said).toMatch(new RegExp(`${fixture.state.pathOf(3)}: its patch is of type "text/x-diff", which is not applied; fetched whole instead`));
    // The inventory knows the patched copy.
    const state = new MirrorState(stateDirOf(dest));
    const row = state.get(fixture.state.locOf(1))!;
    state.close();
    expect(row.status).toBe('verified');
    expect(row.digests.md5).toBe(fixture.state.representation(1, 2).md5);
    expect(row.lastmod).toBe(fixture.state.resources.get(1)!.lastmod);
  });

  it('refuses a small patch whose copies would blow the document up, and fetches the resource whole', async () => {
    await run();
    fixture.change('update', 1, 1);
    // 1.5 KiB of operations, each copying the whole document into itself: 2^40 times its size if applied.
    const bomb = [{ op: 'add', path: '/x', value: 'x'.repeat(64) }, ...Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '', path: `/x${i}` }))];
    fixture.setBroken(patchPath(1, 2), { status: 200, body: JSON.stringify(bomb), headers: { 'content-type': 'application/json-patch+json' } });
    mark = fixture.requests.length;
    const result = await run();
    expect(result).toMatchObject({ mode: 'incremental', updated: 1, failed: 0, patched: 0 });
    expect(notes.join('\n')).toMatch(/its copy operations would make the document larger than 32 MiB\); fetched whole instead/);
    expect(requested(fixture.state.pathOf(1))).toBe(1);
    expect(readFileSync(fileOf(1)).equals(fixture.state.representation(1, 2).body)).toBe(true);
  });

  it('says in plain words why a malformed patch does not apply', async () => {
    await run();
    fixture.change('update', 1, 1);
    fixture.setBroken(patchPath(1, 2), { status: 200, body: JSON.stringify([{ op: 'copy', from: '/x/y/z', path: '/a' }]), headers: { 'content-type': 'application/json-patch+json' } });
    expect(await run()).toMatchObject({ mode: 'incremental', updated: 1, failed: 0, patched: 0 });
    expect(notes.join('\n')).toMatch(/it does not apply to the local copy: Cannot perform the operation from a path that does not exist/);
  });
});

describe('JSON Patch against a Source of its own', () => {
  let server: Server;
  let base: string;
  /** Path → [content type, body]. */
  const served = new Map<string, [string, string]>();
  beforeEach(async () => {
    served.clear();
    server = createServer((req, res) => {
      const got = served.get(req.url ?? '');
      if (got === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': got[0] }).end(got[1]);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
  const md5 = (s: string) => createHash('md5').update(s).digest('hex');
  /** A Source of one JSON resource, /doc.json, mirrored; then updated to `next` by the patch `ops`. */
  async function patchedTo(doc: unknown, ops: unknown[], next: unknown) {
    const before = JSON.stringify(doc);
    const after = JSON.stringify(next);
    served.set('/cap.xml', ['application/xml', `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`]);
    served.set('/rl.xml', ['application/xml', `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>${base}/doc.json</loc><rs:md type="application/json" hash="md5:${md5(before)}" length="${before.length}"/></url></urlset>`]);
    served.set('/cl.xml', ['application/xml', `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></urlset>`]);
    served.set('/doc.json', ['application/json', before]);
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, proxyEnv: {}, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 1 });
    served.set('/doc.json', ['application/json', after]);
    served.set('/patch.json', ['application/json-patch+json', JSON.stringify(ops)]);
    served.set(
      '/cl.xml',
      ['application/xml', `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/><url><loc>${base}/doc.json</loc><rs:md change="updated" datetime="2024-01-02T00:00:00Z" type="application/json" hash="md5:${md5(after)}" length="${after.length}"/><rs:ln rel="http://www.openarchives.org/rs/terms/patch" type="application/json-patch+json" href="${base}/patch.json"/></url></urlset>`],
    );
    const result = await mirror();
    expect(readFileSync(join(dest, new URL(base).host.replace(':', '_'), 'doc.json'), 'utf8')).toBe(after);
    return result;
  }

  it('applies a patch of many moves to a document of some MiB without a copy of the document per move', async () => {
    const doc = { a: 1, big: Array.from({ length: 40_000 }, (_, i) => ({ i, text: 'x'.repeat(40) })) };
    // 4,000 moves (each one cost fast-json-patch a deep copy of the 2 MiB document, ~14 ms here; 400,000 fit in a
    // patch), then a move of a value onto itself, and one within an array.
    const ops = [
      ...Array.from({ length: 4_000 }, (_, i) => (i % 2 === 0 ? { op: 'move', from: '/a', path: '/b' } : { op: 'move', from: '/b', path: '/a' })),
      { op: 'move', from: '/big', path: '/big' },
      { op: 'move', from: '/big/0', path: '/big/1' },
      { op: 'replace', path: '/a', value: 2 },
    ];
    const big = doc.big;
    // (A member moved away and back comes last.)
    const next = { big: [big[1], big[0], ...big.slice(2)], a: 2 };
    const started = Date.now();
    expect(await patchedTo(doc, ops, next)).toMatchObject({ mode: 'incremental', updated: 1, failed: 0, patched: 1 });
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 120_000);

  it('does not fetch a patch whose link reaches further inside the network than the Source (169.254.169.254)', async () => {
    // The Source is also the proxy for every host but itself: a request for the patch would reach it, never leave.
    const patchUrl = 'http://169.254.169.254/patch.json';
    const before = JSON.stringify({ a: 1 });
    const after = JSON.stringify({ a: 2 });
    served.set('/cap.xml', ['application/xml', `<urlset ${ns}><rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cl.xml</loc><rs:md capability="changelist"/></url></urlset>`]);
    served.set('/rl.xml', ['application/xml', `<urlset ${ns}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>${base}/doc.json</loc><rs:md type="application/json" hash="md5:${md5(before)}"/></url></urlset>`]);
    served.set('/cl.xml', ['application/xml', `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/></urlset>`]);
    served.set('/doc.json', ['application/json', before]);
    const proxyEnv = { HTTP_PROXY: base, NO_PROXY: '127.0.0.1' };
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, proxyEnv, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 1 });
    served.set('/doc.json', ['application/json', after]);
    served.set(patchUrl, ['application/json-patch+json', JSON.stringify([{ op: 'replace', path: '/a', value: 2 }])]);
    served.set(
      '/cl.xml',
      ['application/xml', `<urlset ${ns}><rs:md capability="changelist" from="2024-01-01T00:00:00Z"/><url><loc>${base}/doc.json</loc><rs:md change="updated" datetime="2024-01-02T00:00:00Z" type="application/json" hash="md5:${md5(after)}"/><rs:ln rel="http://www.openarchives.org/rs/terms/patch" type="application/json-patch+json" href="${patchUrl}"/></url></urlset>`],
    );
    expect(await mirror()).toMatchObject({ mode: 'incremental', updated: 1, failed: 0, patched: 0 });
    expect(notes.join('\n')).toMatch(/169\.254\.169\.254 is a link-local address .*fetched whole instead/);
    expect(readFileSync(join(dest, new URL(base).host.replace(':', '_'), 'doc.json'), 'utf8')).toBe(after);
  });

  it('refuses, as RFC 6902 does, a move into its own child: fetched whole, said so', async () => {
    const doc = { a: { x: 1 } };
    expect(await patchedTo(doc, [{ op: 'move', from: '/a', path: '/a/b' }], { a: { x: 2 } })).toMatchObject({ updated: 1, failed: 0, patched: 0 });
    expect(notes.join('\n')).toMatch(/it does not apply to the local copy: Cannot move a value into one of its own children\); fetched whole instead/);
  });
});

describe('JSON Patch and a local copy that is no file any more', () => {
  let server: Server;
  let base: string;
  afterEach(() => new Promise<void>((r) => server.close(() => r())));

  const recorded = 'the local copy is not the one the mirror recorded';
  it.each([
    ['a FIFO (read, it would wait for a writer for ever)', (path: string) => execFileSync('mkfifo', [path]), recorded],
    ['a link to /dev/zero (read, it would fill the memory)', (path: string) => symlinkSync('/dev/zero', path), recorded],
    [
      // A file an interrupted run left in place has a row with no length to judge it by: it was read whole, any size.
      'a file over 32 MiB whose row records no length (read whole, it would fill the memory)',
      (path: string) => {
        writeFileSync(path, Buffer.alloc(33 * 1024 * 1024, 0x20));
        const state = new MirrorState(stateDirOf(dest));
        state.db.exec("UPDATE inventory SET length = NULL, md5 = NULL, sha1 = NULL, sha256 = NULL, status = 'damaged'");
        state.close();
      },
      'the local copy is over 32 MiB',
    ],
  ])('is not read when it is %s: the resource is fetched whole', async (_what, replace, why) => {
    const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
    const md5 = (s: string) => createHash('md5').update(s).digest('hex');
    const before = JSON.stringify({ a: 1 });
    const after = JSON.stringify({ a: 2 });
    const served = new Map<string, [string, string]>();
    server = createServer((req, res) => {
      const got = served.get(req.url ?? '');
      if (got === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': got[0] }).end(got[1]);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const list = (md: string, entry: string) => `<urlset ${ns}><rs:md ${md}/>${entry}</urlset>`;
    served.set('/cap.xml', ['application/xml', list('capability="capabilitylist"', `<url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url><url><loc>${base}/cl.xml</loc><rs:md capability="changelist"/></url>`)]);
    served.set('/rl.xml', ['application/xml', list('capability="resourcelist" at="2024-01-01T00:00:00Z"', `<url><loc>${base}/doc.json</loc><rs:md type="application/json" hash="md5:${md5(before)}"/></url>`)]);
    served.set('/cl.xml', ['application/xml', list('capability="changelist" from="2024-01-01T00:00:00Z"', '')]);
    served.set('/doc.json', ['application/json', before]);
    const mirror = () => sync({ url: `${base}/cap.xml`, dest, timeoutMs: 5_000, proxyEnv: {}, onNote: (n) => void notes.push(n) });
    expect(await mirror()).toMatchObject({ mode: 'baseline', created: 1 });
    const local = join(dest, new URL(base).host.replace(':', '_'), 'doc.json');
    rmSync(local);
    replace(local);
    served.set('/doc.json', ['application/json', after]);
    served.set('/patch.json', ['application/json-patch+json', JSON.stringify([{ op: 'replace', path: '/a', value: 2 }])]);
    served.set(
      '/cl.xml',
      ['application/xml', list('capability="changelist" from="2024-01-01T00:00:00Z"', `<url><loc>${base}/doc.json</loc><rs:md change="updated" datetime="2024-01-02T00:00:00Z" type="application/json" hash="md5:${md5(after)}"/><rs:ln rel="http://www.openarchives.org/rs/terms/patch" type="application/json-patch+json" href="${base}/patch.json"/></url>`)],
    );
    const result = await mirror();
    // (A copy left in place by an interrupted run, once fetched, counts as the run that left it would have: created.)
    expect(result).toMatchObject({ mode: 'incremental', failed: 0, patched: 0 });
    expect(result.updated + result.created).toBe(1);
    expect(notes.join('\n')).toContain(`was not applied (${why}); fetched whole instead`);
    expect(lstatSync(local).isFile()).toBe(true);
    expect(readFileSync(local, 'utf8')).toBe(after);
  }, 20_000);
});
