// What a sync makes of a folder: one Source per mirror (another is refused, as the app refuses it), nothing written by
// a dry run, and nothing left behind by a first sync that failed before it bound the folder to a Source.
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../../e2e/fixture-source/index.ts';
import { PATHS } from '../../../e2e/fixture-source/paths.ts';
import { MemorySecretStore } from './secrets.ts';
import { secretKey } from './settings.ts';
import { MirrorState, stateDirOf } from './state.ts';
import { sync } from './sync.ts';

let fixture: FixtureSource;
let root: string;

beforeEach(async () => {
  fixture = await startFixtureSource({ resources: 12, changeListSize: 5 });
  root = mkdtempSync(join(tmpdir(), 'binding-'));
});
afterEach(async () => {
  await fixture.close();
});

const url = (path: string) => fixture.url + path;
const bindingOf = (dest: string) => {
  const state = new MirrorState(stateDirOf(dest));
  try {
    return state.binding();
  } finally {
    state.close();
  }
};

describe('one Source per mirror', () => {
  it('refuses another Capability List in a mirror of one, dry run or not, and keeps the binding', async () => {
    const dest = join(root, 'm');
    await sync({ url: url(fixture.paths.dataset1.capabilityList), dest, timeoutMs: 2_000 });
    const before = bindingOf(dest);
    for (const dryRun of [true, false]) {
      await expect(sync({ url: url(fixture.paths.dataset2.capabilityList), dest, dryRun, timeoutMs: 2_000 })).rejects.toThrow(
        `${dest} is a mirror of ${url(fixture.paths.dataset1.capabilityList)} already, and ${url(fixture.paths.dataset2.capabilityList)} leads to ${url(fixture.paths.dataset2.capabilityList)}. Choose another folder for it.`,
      );
    }
    expect(bindingOf(dest)).toEqual(before);
    // The next sync by the folder alone goes on with the first Source.
    const next = await sync({ dest, timeoutMs: 2_000 });
    expect(next.mode).toBe('incremental');
  });

  it('keeps the secret given to a run only when the run keeps the mirror: not when refused, not in a dry run', async () => {
    const dest = join(root, 'm');
    const store = new MemorySecretStore();
    const bearer = (token: string) => ({ scheme: 'bearer' as const, token });
    await sync({ url: url(fixture.paths.dataset1.capabilityList), dest, credentials: bearer('TOKEN-A'), secretStore: store, timeoutMs: 2_000 });
    const key = secretKey(bindingOf(dest)!.id!);
    expect(store.get(key)).toBe('TOKEN-A');
    await expect(sync({ url: url(fixture.paths.dataset2.capabilityList), dest, credentials: bearer('TOKEN-B'), secretStore: store, timeoutMs: 2_000 })).rejects.toThrow(/is a mirror of/);
    await sync({ dest, dryRun: true, credentials: bearer('TOKEN-C'), secretStore: store, timeoutMs: 2_000 });
    await sync({ dest, dryRun: true, credentials: null, secretStore: store, timeoutMs: 2_000 });
    expect(store.get(key)).toBe('TOKEN-A');
    // The next run by the folder alone sends the first Source its own token.
    const before = fixture.requests.length;
    await sync({ dest, secretStore: store, timeoutMs: 2_000 });
    expect(fixture.requests.slice(before).every((r) => r.headers.authorization === 'Bearer TOKEN-A')).toBe(true);
  });

  it('takes another URL of the same Source (its site instead of its Capability List)', async () => {
    const dest = join(root, 'm');
    await sync({ url: url(fixture.paths.dataset1.capabilityList), dest, timeoutMs: 2_000 });
    const result = await sync({ url: url(fixture.paths.dataset1.resourceList), dest, mode: 'baseline', timeoutMs: 2_000 });
    expect(result.failed).toBe(0);
    expect(bindingOf(dest)?.capabilityListUrl).toBe(url(fixture.paths.dataset1.capabilityList));
  });
});

describe('a folder that is not a mirror yet', () => {
  it('a dry run writes nothing: a new folder is not made, an empty one stays empty', async () => {
    const missing = join(root, 'new');
    const result = await sync({ url: url(fixture.paths.dataset1.capabilityList), dest: missing, dryRun: true, timeoutMs: 2_000 });
    expect(result.created).toBe(12);
    expect(existsSync(missing)).toBe(false);
    const empty = join(root, 'empty');
    mkdirSync(empty);
    await sync({ url: url(fixture.paths.dataset1.capabilityList), dest: empty, dryRun: true, timeoutMs: 2_000 });
    expect(readdirSync(empty)).toEqual([]);
  });

  it('a first sync that fails before it finds the Source leaves no mirror behind', async () => {
    const dest = join(root, 'bad');
    // (The site offers two Capability Lists: the error says what the URL itself answered too.)
    await expect(sync({ url: url('/nowhere.xml'), dest, timeoutMs: 2_000 })).rejects.toThrow(
      new RegExp(`^${url('/nowhere.xml').replace(/[.?]/g, '\\$&')} answered 404 Not Found\\. The Source offers \\d+ Capability Lists; choose one with --capabilitylist:`),
    );
    expect(existsSync(dest)).toBe(false);
    const kept = join(root, 'kept');
    mkdirSync(kept);
    await expect(sync({ url: 'http://127.0.0.1:9/', dest: kept, timeoutMs: 1_000 })).rejects.toThrow();
    expect(readdirSync(kept)).toEqual([]);
  });

  it('a first sync that fails after it bound the folder keeps the mirror, to resume', async () => {
    const dest = join(root, 'm');
    fixture.setBroken(fixture.paths.dataset1.resourceList, { status: 500 });
    const result = await sync({ url: url(fixture.paths.dataset1.capabilityList), dest, mode: 'baseline', timeoutMs: 2_000 }).catch((e: Error) => e);
    expect(result).toBeInstanceOf(Error);
    expect(bindingOf(dest)?.capabilityListUrl).toBe(url(fixture.paths.dataset1.capabilityList));
  });
});

describe('a mirror of one list', () => {
  it('of a Change List: its first baseline comes from the Resource List beside it, then it follows the changes', async () => {
    const dest = join(root, 'm');
    const first = await sync({ url: url(fixture.paths.dataset1.changeListIndex), dest, timeoutMs: 2_000 });
    expect(first).toMatchObject({ mode: 'baseline', created: 12, failed: 0 });
    expect(bindingOf(dest)).toMatchObject({ changeListUrl: url(fixture.paths.dataset1.changeListIndex), resourceListUrl: url(fixture.paths.dataset1.resourceList) });
    fixture.change('update', 2);
    const next = await sync({ dest, timeoutMs: 2_000 });
    expect(next).toMatchObject({ mode: 'incremental', updated: 2, failed: 0 });
  });

  it('of a Resource List: says it follows that list alone, not that the Source offers no Change List', async () => {
    const dest = join(root, 'm');
    const list = url(fixture.paths.dataset1.resourceList);
    await sync({ url: list, dest, timeoutMs: 2_000 });
    const notes: string[] = [];
    await sync({ dest, timeoutMs: 2_000, onNote: (n) => notes.push(n) });
    expect(notes[0]).toBe(
      `This mirror follows the Resource List ${list} alone, without a Change List (if its Capability List ${url(fixture.paths.dataset1.capabilityList)} offers one, mirror that list instead to follow the changes): ` +
        'a new baseline is compared with the inventory instead. Only resources whose listed hash or length differ from the local copy are fetched (those the list gives neither for are asked for conditionally); what the Source no longer lists goes by the deletion policy.',
    );
  });
});

const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

/**
 * A Source of a test's own on 127.0.0.1: `route` answers a path (with `xml(body)` for a urlset) and says whether it
 * did; any other path is a 404.
 */
async function ownSource(route: (path: string, base: string, xml: (body: string) => void, res: ServerResponse) => boolean): Promise<{ base: string; close: () => Promise<void> }> {
  let base = '';
  const server = createServer((req, res) => {
    const xml = (body: string) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?>\n<urlset ${NS}>${body}</urlset>`);
    };
    if (!route(req.url ?? '/', base, xml, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('a list without an up link', () => {
  it('mirrored alone, then by the Capability List that names it: the same Source, not refused', async () => {
    const { base, close } = await ownSource((path, base, xml, res) => {
      if (path === '/rl.xml') xml(`<rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>${base}/res/a</loc><rs:md length="1"/></url>`);
      else if (path === '/cl.xml') xml(`<rs:md capability="capabilitylist"/><url><loc>${base}/rl.xml</loc><rs:md capability="resourcelist"/></url>`);
      else if (path === '/res/a') res.end('a');
      else return false;
      return true;
    });
    try {
      const dest = join(root, 'm');
      await sync({ url: `${base}/rl.xml`, dest, timeoutMs: 2_000 });
      expect(bindingOf(dest)?.capabilityListUrl).toBeNull();
      const again = await sync({ url: `${base}/cl.xml`, dest, timeoutMs: 2_000 });
      expect(again.failed).toBe(0);
      expect(bindingOf(dest)?.capabilityListUrl).toBe(`${base}/cl.xml`);
    } finally {
      await close();
    }
  });
});

describe('a list URL that cannot be read, on a site that leads to a Source', () => {
  it('says why the list was not read, in the error and in the note of a run that follows the site instead', async () => {
    // The named list was cut short or stalled, the site's /.well-known/resourcesync led elsewhere: the error said only
    // "The Source offers 2 Capability Lists", and with one Capability List the run mirrored that one without a word.
    await expect(sync({ url: url(PATHS.broken.truncated), dest: join(root, 'a'), timeoutMs: 2_000 })).rejects.toThrow(
      new RegExp(`^${url(PATHS.broken.truncated).replace(/[.?]/g, '\\$&')} is truncated: .*\\. The Source offers \\d+ Capability Lists; choose one`),
    );
    fixture.setBroken(fixture.paths.dataset1.resourceList, 'stall');
    await expect(sync({ url: url(fixture.paths.dataset1.resourceList), dest: join(root, 'b'), timeoutMs: 1_000 })).rejects.toThrow(
      new RegExp(`^${url(fixture.paths.dataset1.resourceList).replace(/[.?]/g, '\\$&')} could not be read: Timed out after 1 s waiting for more data\\. The Source offers`),
    );

    const { base, close } = await ownSource((path, base, xml, res) => {
      if (path === '/part.xml') {
        res.writeHead(200, { 'content-type': 'application/xml', 'content-length': '500' });
        res.end(`<?xml version="1.0"?>\n<urlset ${NS}><rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/>`);
      } else if (path === '/.well-known/resourcesync') xml(`<rs:md capability="description"/><url><loc>${base}/cl.xml</loc><rs:md capability="capabilitylist"/></url>`);
      else if (path === '/cl.xml') xml(`<rs:ln rel="up" href="${base}/.well-known/resourcesync"/><rs:md capability="capabilitylist"/><url><loc>${base}/all.xml</loc><rs:md capability="resourcelist"/></url>`);
      else if (path === '/all.xml') xml(`<rs:md capability="resourcelist" at="2024-01-01T00:00:00Z"/><url><loc>${base}/res/a</loc><rs:md length="1"/></url>`);
      else if (path === '/res/a') res.end('a');
      else return false;
      return true;
    });
    try {
      const notes: string[] = [];
      await sync({ url: `${base}/part.xml`, dest: join(root, 'c'), timeoutMs: 2_000, onNote: (n) => notes.push(n) });
      expect(notes.join('\n')).toContain(`${base}/part.xml could not be read: Timed out after 2 s waiting for more data. The mirror follows the Capability List ${base}/cl.xml, found from there.`);
    } finally {
      await close();
    }
  });
});
