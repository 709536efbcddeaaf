import { createHash } from 'node:crypto';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentError } from '../../src-main/engine/documents/errors.ts';
import type { Entry } from '../../src-main/engine/documents/model.ts';
import { Http } from '../../src-main/engine/http/client.ts';
import { loadDocument, type LoadedDocument } from '../../src-main/engine/load.ts';
import { PATHS, startFixtureSource, type FixtureSource } from './index.ts';

let fixture: FixtureSource;
let http: Http;

async function load(path: string): Promise<{ doc: LoadedDocument; entries: Entry[] }> {
  const entries: Entry[] = [];
  const doc = await loadDocument(http, fixture.url + path, { onEntry: (entry) => void entries.push(entry) });
  return { doc, entries };
}

function errors(doc: LoadedDocument): string[] {
  return doc.summary.findings.filter((f) => f.severity === 'error').map((f) => `${f.code}: ${f.message}`);
}

async function fetchBytes(url: string): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
  const res = await http.get(url);
  const chunks: Uint8Array[] = [];
  for await (const chunk of res.body) chunks.push(chunk);
  return { status: res.status, body: Buffer.concat(chunks), headers: res.headers };
}

function hashOf(body: Buffer): string {
  return `md5:${createHash('md5').update(body).digest('hex')} sha-256:${createHash('sha256').update(body).digest('hex')}`;
}

beforeAll(async () => {
  fixture = await startFixtureSource();
  http = new Http({ timeoutMs: 10_000 });
});

afterAll(async () => {
  await http.close();
  await fixture.close();
});

describe('fixture Source', () => {
  it('listens on 127.0.0.1 only', () => {
    expect(fixture.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves a Resource List Index whose parts hold more than 50,000 entries, each part without errors', async () => {
    const { doc: index, entries: parts } = await load(PATHS.dataset2.resourceListIndex);
    expect(index.summary.capability).toBe('resourcelist');
    expect(index.summary.isIndex).toBe(true);
    expect(errors(index)).toEqual([]);
    expect(parts).toHaveLength(3);
    let total = 0;
    for (const part of parts) {
      const doc = await loadDocument(http, part.loc);
      expect(doc.summary.isIndex).toBe(false);
      expect(doc.summary.capability).toBe('resourcelist');
      expect(doc.summary.links.map((l) => l.rel).sort()).toEqual(['index', 'up']);
      expect(errors(doc)).toEqual([]);
      total += doc.summary.entries;
    }
    expect(total).toBe(60_000);
    expect(total).toBeGreaterThan(50_000);
  });

  it('serves every advertised document without error findings', async () => {
    const seen: string[] = [];
    const { doc: sd, entries: lists } = await load(PATHS.wellKnown);
    expect(sd.summary.capability).toBe('description');
    expect(errors(sd)).toEqual([]);
    expect(lists.map((e) => e.loc)).toEqual([fixture.url + PATHS.dataset1.capabilityList, fixture.url + PATHS.dataset2.capabilityList]);
    for (const list of lists) {
      const cl = await loadDocument(http, list.loc, { onEntry: (e) => void seen.push(`${e.md.capability} ${e.loc}`) });
      expect(cl.summary.capability).toBe('capabilitylist');
      expect(errors(cl)).toEqual([]);
    }
    expect(seen).toEqual([
      `resourcelist ${fixture.url}${PATHS.dataset1.resourceList}`,
      `resourcedump ${fixture.url}${PATHS.dataset1.resourceDump}`,
      `changelist ${fixture.url}${PATHS.dataset1.changeListIndex}`,
      `changedump ${fixture.url}${PATHS.dataset1.changeDump}`,
      `change-notification ${fixture.url}${PATHS.dataset1.notifications}`,
      `resourcelist ${fixture.url}${PATHS.dataset2.resourceListIndex}`,
    ]);
    const documents: [string, string][] = [
      [PATHS.dataset1.resourceList, 'resourcelist'],
      [PATHS.dataset1.resourceDump, 'resourcedump'],
      [PATHS.dataset1.resourceDumpManifest(1), 'resourcedump-manifest'],
      [PATHS.dataset1.resourceDumpManifest(2), 'resourcedump-manifest'],
      [PATHS.dataset1.changeListIndex, 'changelist'],
      [PATHS.dataset1.changeList(1), 'changelist'],
      [PATHS.dataset1.changeList(3), 'changelist'],
      [PATHS.dataset1.changeDump, 'changedump'],
      [PATHS.dataset1.changeDumpManifest(1), 'changedump-manifest'],
    ];
    for (const [path, capability] of documents) {
      const { doc } = await load(path);
      expect(doc.summary.capability, path).toBe(capability);
      expect(errors(doc), path).toEqual([]);
    }
  });

  it('advertises the change-notification channel with a hub on the same server', async () => {
    const { entries } = await load(PATHS.dataset1.capabilityList);
    const channel = entries.find((e) => e.md.capability === 'change-notification');
    expect(channel?.links).toEqual([{ rel: 'hub', href: fixture.url + PATHS.hub }]);
    const topic = await http.get(channel!.loc);
    expect(topic.status).toBe(200);
    expect(topic.headers['content-type']).toBe('application/xml');
    expect(topic.headers.link).toContain(`<${fixture.url}${PATHS.hub}>; rel="hub"`);
    await topic.discard();
  });

  it('uses links of every kind', async () => {
    const rels = new Set<string>();
    const collect = (entries: Entry[], doc: LoadedDocument) => {
      for (const l of doc.summary.links) rels.add(l.rel);
      for (const e of entries) for (const l of e.links) rels.add(l.rel);
    };
    for (const path of [
      PATHS.wellKnown,
      PATHS.dataset1.capabilityList,
      PATHS.dataset1.resourceList,
      PATHS.dataset1.resourceDump,
      PATHS.dataset1.changeList(3),
    ]) {
      const { doc, entries } = await load(path);
      collect(entries, doc);
    }
    fixture.change('update', 30);
    const { doc, entries } = await load(PATHS.dataset1.changeList(4));
    collect(entries, doc);
    for (const rel of [
      'up',
      'index',
      'describedby',
      'duplicate',
      'alternate',
      'canonical',
      'memento',
      'timegate',
      'timemap',
      'collection',
      'via',
      'contents',
      'hub',
      'http://www.openarchives.org/rs/terms/patch',
    ]) {
      expect(rels, rel).toContain(rel);
    }
  });

  it('serves resource bodies that match the hashes and lengths in the lists', async () => {
    const { entries } = await load(PATHS.dataset1.resourceList);
    expect(entries.length).toBeGreaterThanOrEqual(90);
    for (const entry of entries) {
      const { status, body, headers } = await fetchBytes(entry.loc);
      expect(status).toBe(200);
      expect(hashOf(body)).toBe(entry.md.hash);
      expect(String(body.length)).toBe(entry.md.length);
      expect(headers['content-length']).toBe(entry.md.length);
      expect(headers['content-type']).toBe(entry.md.type);
      for (const link of entry.links.filter((l) => ['duplicate', 'memento', 'via', 'canonical'].includes(l.rel))) {
        const related = await fetchBytes(link.href);
        expect(hashOf(related.body), `${link.rel} ${link.href}`).toBe(entry.md.hash);
      }
    }
    // A sample of the 60,000 in dataset2: every 1,999th entry of each part.
    const { entries: parts } = await load(PATHS.dataset2.resourceListIndex);
    for (const part of parts) {
      const sample: Entry[] = [];
      await loadDocument(http, part.loc, { onEntry: (e) => void (e.index % 1999 === 0 && sample.push(e)) });
      expect(sample.length).toBeGreaterThan(5);
      for (const entry of sample) {
        const { body } = await fetchBytes(entry.loc);
        expect(hashOf(body)).toBe(entry.md.hash);
        expect(String(body.length)).toBe(entry.md.length);
      }
    }
  });

  it('serves Resource Dump packages with manifest.xml inside, matching the manifest URL and the dump', async () => {
    const { entries } = await load(PATHS.dataset1.resourceDump);
    expect(entries).toHaveLength(2);
    for (const entry of entries) {
      const { body: zipBytes } = await fetchBytes(entry.loc);
      expect(String(zipBytes.length)).toBe(entry.md.length);
      expect(entry.md.hash).toBe(`md5:${createHash('md5').update(zipBytes).digest('hex')}`);
      const zip = await JSZip.loadAsync(zipBytes);
      const inside = await zip.file('manifest.xml')!.async('string');
      const contents = entry.links.find((l) => l.rel === 'contents')!;
      const { body: manifestBytes } = await fetchBytes(contents.href);
      expect(inside).toBe(manifestBytes.toString('utf8'));
      const manifestEntries: Entry[] = [];
      await loadDocument(http, contents.href, { onEntry: (e) => void manifestEntries.push(e) });
      for (const item of manifestEntries) {
        const bitstream = await zip.file(item.md.path!.slice(1))!.async('nodebuffer');
        expect(hashOf(bitstream)).toBe(item.md.hash);
      }
    }
  });

  it('serves Change Dump packages for closed Change Lists', async () => {
    const { entries } = await load(PATHS.dataset1.changeDump);
    expect(entries.length).toBeGreaterThanOrEqual(2);
    const first = entries[0];
    const { body } = await fetchBytes(first.loc);
    expect(String(body.length)).toBe(first.md.length);
    const zip = await JSZip.loadAsync(body);
    const manifest = await zip.file('manifest.xml')!.async('string');
    expect(manifest).toContain('capability="changedump-manifest"');
    const { body: copy } = await fetchBytes(first.links.find((l) => l.rel === 'contents')!.href);
    expect(copy.toString('utf8')).toBe(manifest);
  });

  it('change() makes the Change Lists grow, the newest open, and changes the resources', async () => {
    const own = await startFixtureSource({ resources: 10, changeListSize: 8, bigListParts: 1, bigListEntries: 10 });
    try {
      const index = async () => {
        const entries: Entry[] = [];
        await loadDocument(http, own.url + PATHS.dataset1.changeListIndex, { onEntry: (e) => void entries.push(e) });
        return entries;
      };
      const before = await index();
      expect(before).toHaveLength(2);
      expect(before[0].md.until).toBeDefined();
      expect(before[1].md.until).toBeUndefined();

      // 10 creations + 7 changes = 17 > 2 × 8: a third Change List opens.
      const updated = own.change('update', 4);
      const created = own.change('create', 2);
      const deleted = own.change('delete', 1);
      expect(updated.map((r) => r.change)).toEqual(['updated', 'updated', 'updated', 'updated']);
      expect(created.map((r) => r.id)).toEqual([11, 12]);
      expect(deleted[0].change).toBe('deleted');

      const after = await index();
      expect(after).toHaveLength(3);
      expect(after[1].md.until).toBeDefined();
      expect(after[2].md.until).toBeUndefined();
      expect(after[2].md.from).toBe(after[1].md.until);

      const newest: Entry[] = [];
      const doc = await loadDocument(http, after[2].loc, { onEntry: (e) => void newest.push(e) });
      expect(doc.summary.md.until).toBeUndefined();
      expect(doc.summary.findings.filter((f) => f.severity === 'error')).toEqual([]);
      expect(newest.at(-1)?.md.change).toBe('deleted');
      expect(newest.at(-1)?.loc).toBe(deleted[0].loc);

      // The served state follows the changes.
      expect((await fetchBytes(deleted[0].loc)).status).toBe(410);
      const u = updated.at(-1)!;
      if (u.id !== deleted[0].id) expect(hashOf((await fetchBytes(u.loc)).body)).toBe(u.hash);
      const list: Entry[] = [];
      await loadDocument(http, own.url + PATHS.dataset1.resourceList, { onEntry: (e) => void list.push(e) });
      expect(list.map((e) => e.loc)).not.toContain(deleted[0].loc);
      expect(list.map((e) => e.loc)).toContain(created[1].loc);
      expect(own.notifications).toHaveLength(3);
      expect(own.notifications[2]).toContain('change="deleted"');
    } finally {
      await own.close();
    }
  });

  it('is deterministic for a seed', async () => {
    const a = await startFixtureSource({ seed: 7, bigListParts: 1, bigListEntries: 5 });
    const b = await startFixtureSource({ seed: 7, bigListParts: 1, bigListEntries: 5 });
    const c = await startFixtureSource({ seed: 8, bigListParts: 1, bigListEntries: 5 });
    try {
      const text = async (f: FixtureSource, path: string) =>
        (await fetchBytes(f.url + path)).body.toString('utf8').replaceAll(f.url, 'BASE');
      for (const path of [PATHS.dataset1.resourceList, PATHS.dataset2.resourceListPart(1), PATHS.dataset1.changeList(1)]) {
        expect(await text(a, path)).toBe(await text(b, path));
      }
      expect(await text(a, PATHS.dataset1.resourceList)).not.toBe(await text(c, PATHS.dataset1.resourceList));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('offers every discovery route, and each can be switched off', async () => {
    const home = await fetchBytes(fixture.url + '/');
    expect(home.body.toString()).toContain(`<link rel="resourcesync" href="${PATHS.dataset1.capabilityList}">`);
    const article = await fetchBytes(fixture.url + PATHS.linkHeaderPage);
    expect(article.headers.link).toContain('rel="alternate resourcesync"');
    const robots = await fetchBytes(fixture.url + PATHS.robots);
    expect(robots.body.toString()).toContain(`Sitemap: ${fixture.url}${PATHS.dataset1.resourceList}`);
    expect((await fetchBytes(fixture.url + PATHS.wellKnown)).status).toBe(200);

    const off = await startFixtureSource({
      routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false },
      bigListParts: 1,
      bigListEntries: 5,
    });
    try {
      expect((await fetchBytes(off.url + '/')).body.toString()).not.toContain('resourcesync');
      expect((await fetchBytes(off.url + PATHS.linkHeaderPage)).headers.link).toBeUndefined();
      expect((await fetchBytes(off.url + PATHS.robots)).status).toBe(404);
      expect((await fetchBytes(off.url + PATHS.wellKnown)).status).toBe(404);
      expect(off.sourceDescriptionUrl).toBe(off.url + PATHS.sourceDescription);
      const { body } = await fetchBytes(off.url + PATHS.dataset1.capabilityList);
      expect(body.toString()).toContain(`<rs:ln rel="up" href="${off.url}${PATHS.sourceDescription}"/>`);
    } finally {
      await off.close();
    }
  });

  it('serves broken documents that the reader refuses or reports', async () => {
    const refused = async (path: string) =>
      loadDocument(http, fixture.url + path).then(
        () => 'read',
        (err: unknown) => (err instanceof DocumentError ? err.code : String(err)),
      );
    expect(await refused(PATHS.broken.junkNamespace)).toBe('wrong-namespace');
    expect(await refused(PATHS.broken.doctype)).toBe('doctype');
    expect(await refused(PATHS.broken.truncated)).toBe('truncated');
    expect(await refused(PATHS.broken.htmlAsXml)).toBe('html');
    expect(await refused(PATHS.broken.notXml)).toBe('not-xml');
    expect(await refused(PATHS.broken.empty)).toBe('empty');

    const noType = await load(PATHS.broken.noContentType);
    expect(noType.doc.contentType).toBeNull();
    expect(noType.doc.summary.capability).toBe('resourcelist');
    const wrongType = await load(PATHS.broken.wrongContentType);
    expect(wrongType.doc.contentType).toBe('text/html; charset=utf-8');
    expect(wrongType.doc.summary.capability).toBe('capabilitylist');

    const outOfOrder = await load(PATHS.broken.changeListOutOfOrder);
    expect(outOfOrder.doc.summary.findings.map((f) => f.code)).toContain('change-order');
    const noUp = await load(PATHS.broken.capabilityListWithoutUp);
    expect(noUp.doc.summary.findings.map((f) => f.code)).toContain('missing-up');
  });

  it('has a slow endpoint, a redirect loop, failures on demand, a hub and a request log', async () => {
    const quick = new Http({ timeoutMs: 200 });
    try {
      await expect(quick.get(fixture.url + PATHS.slow)).rejects.toMatchObject({ code: 'timeout' });
      const slowBody = await quick.get(fixture.url + PATHS.slowBody);
      await expect(slowBody.text()).rejects.toMatchObject({ code: 'timeout' });
    } finally {
      await quick.close();
    }
    await expect(http.get(fixture.url + PATHS.redirectLoop)).rejects.toMatchObject({ code: 'too-many-redirects' });

    fixture.setBroken(PATHS.dataset1.resourceList, { status: 503 });
    expect((await fetchBytes(fixture.url + PATHS.dataset1.resourceList)).status).toBe(503);
    fixture.setBroken(PATHS.dataset1.resourceList, 'reset');
    await expect(http.get(fixture.url + PATHS.dataset1.resourceList)).rejects.toMatchObject({ code: 'reset' });
    fixture.setBroken(PATHS.dataset1.resourceList, null);
    expect((await fetchBytes(fixture.url + PATHS.dataset1.resourceList)).status).toBe(200);

    const res = await fetch(fixture.url + PATHS.hub, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'hub.mode=subscribe&hub.topic=x',
    });
    // No hub.callback: the hub refuses the request (WebSub §5.1).
    expect(res.status).toBe(400);
    expect(fixture.hubRequests.at(-1)?.body).toBe('hub.mode=subscribe&hub.topic=x');

    const logged = fixture.requests.filter((r) => r.path === PATHS.dataset1.resourceList);
    expect(logged.length).toBeGreaterThanOrEqual(3);
    expect(logged[0].method).toBe('GET');
    expect(logged[0].headers['user-agent']).toContain('ResourceSync-Desktop');
  });
});
