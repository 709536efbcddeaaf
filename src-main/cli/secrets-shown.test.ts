// Secrets a person gives rsdesk are neither kept in the mirror folder nor printed: a proxy's password, a user name and
// password written into a URL, the value of a malformed --header; and a proxy that cannot be reached is named as the
// proxy, not as the Source. Real processes against the fixture Source.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { Http } from '../engine/http/client.ts';
import { parseProxySetting, proxyFor } from '../engine/http/dispatcher.ts';
import { Fetcher } from '../engine/mirror/fetcher.ts';
import { parseHeader } from '../engine/mirror/settings.ts';
import { runRsdesk } from './run-rsdesk.ts';

const PASSWORD = 'S3CRET-pw-4711';
let fixture: FixtureSource;
let data: string;

const rsdesk = (args: string[]) =>
  runRsdesk(args, { env: { XDG_DATA_HOME: data, HTTP_PROXY: '', http_proxy: '', HTTPS_PROXY: '', https_proxy: '' } });

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** Every file of a folder, read as bytes (state.sqlite, its WAL, the binding). */
function folderText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name)).toString('latin1'))
    .join('\n');
}

beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 3, auth: `Basic ${Buffer.from(`me:${PASSWORD}`).toString('base64')}` });
  data = mkdtempSync(join(tmpdir(), 'rsdesk-data-'));
});
afterAll(async () => {
  await fixture.close();
});

describe('secrets given to rsdesk', () => {
  it('a user name and password in the URL are sent as basic credentials to that Source, kept out of the folder and of every message', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-userinfo-'));
    const withUserinfo = fixture.url.replace('http://', `http://me:${PASSWORD}@`) + fixture.paths.dataset1.resourceList;
    const r = await rsdesk(['sync', withUserinfo, '--dest', dest, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ created: 3, failed: 0 });
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(folderText(dest)).not.toContain(PASSWORD);
    // Kept where a --basic password is, so the next run needs nothing.
    expect(readFileSync(join(data, 'resourcesync-desktop', 'mirror-secrets.json'), 'utf8')).toContain(PASSWORD);
    const again = await rsdesk(['sync', '--dest', dest, '--json']);
    expect(again.code, again.stderr).toBe(0);
    const runs = await rsdesk(['runs', '--dest', dest, '--json']);
    expect(runs.stdout).not.toContain(PASSWORD);
    // Other commands, which take a bearer token only, refuse it without printing it.
    for (const command of ['discover', 'check', 'inspect']) {
      const refused = await rsdesk([command, withUserinfo]);
      expect(refused.code, command).toBe(2);
      expect(refused.stderr, command).toContain(`give ${fixture.url + fixture.paths.dataset1.resourceList} without them`);
      expect(refused.stderr, command).not.toContain(PASSWORD);
    }
  }, 60_000);

  it('a user name and password in a URL of another origin than the Source\'s are refused, never sent', async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-userinfo-other-'));
    // The same server by another name: another origin, where the Capability List leads.
    const other = fixture.url.replace('127.0.0.1', 'localhost').replace('http://', `http://me:${PASSWORD}@`);
    const before = fixture.requests.length;
    const r = await rsdesk(['sync', other + '/', '--capabilitylist', fixture.url + fixture.paths.dataset1.capabilityList, '--dest', dest]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`are for ${fixture.url.replace('127.0.0.1', 'localhost')}, but this mirror's Source is at ${fixture.url}, where they are not sent`);
    expect(r.stderr).not.toContain(PASSWORD);
    expect(fixture.requests.slice(before).filter((q) => q.headers.authorization !== undefined)).toEqual([]);
  });

  it("a proxy's password is refused, saying how to give it instead; nothing is written", async () => {
    const dest = mkdtempSync(join(tmpdir(), 'rsdesk-proxy-'));
    const r = await rsdesk(['sync', fixture.url + fixture.paths.dataset1.resourceList, '--dest', dest, '--proxy', `http://puser:${PASSWORD}@127.0.0.1:3128`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('rsdesk: The proxy 127.0.0.1:3128 is given with a user name or password, which would be kept in the mirror folder.');
    expect(r.stderr).toContain('HTTP_PROXY');
    expect(r.stderr).not.toContain(PASSWORD);
    expect(readdirSync(dest)).toEqual([]);
    expect(() => parseProxySetting('http://u:p@proxy.example:8080')).toThrow(/user name or password/);
    expect(parseProxySetting('http://proxy.example:8080')).toBe('http://proxy.example:8080/');
  });

  it('a malformed --header is named, its value never shown', async () => {
    expect(() => parseHeader('X-Api-Key SEKRIT')).toThrow('The X-Api-Key header is not written "Name: value" (a colon after the name); its value is not shown here');
    expect(() => parseHeader(' SEKRIT-ONLY')).not.toThrow(/SEKRIT/);
    const r = await rsdesk(['sync', fixture.url, '--dest', mkdtempSync(join(tmpdir(), 'rsdesk-h-')), '--header', 'X-Api-Key SEKRIT']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('The X-Api-Key header is not written "Name: value"');
    expect(r.stderr).not.toContain('SEKRIT');
  });

  it('a proxy that cannot be reached is named as the proxy, not as the Source', async () => {
    const port = await closedPort();
    const url = fixture.url + fixture.paths.dataset1.resourceList;
    const http = new Http({ proxy: `http://127.0.0.1:${port}/`, timeoutMs: 5000 });
    try {
      await expect(http.get(url)).rejects.toThrow(`Connection refused by the proxy 127.0.0.1:${port} (for ${url})`);
    } finally {
      await http.close();
    }
    const fetcher = new Fetcher({ proxy: 'env', proxyEnv: { HTTP_PROXY: `http://u:p@127.0.0.1:${port}` }, retries: 0, timeoutMs: 5000 });
    try {
      await expect(fetcher.get(url, {}, new AbortController().signal)).rejects.toThrow(`Connection refused by the proxy 127.0.0.1:${port} (for ${url})`);
    } finally {
      await fetcher.close();
    }
    // NO_PROXY as undici reads it: the Source is reached directly, and a failure is its own.
    expect(proxyFor(new URL(url), 'env', { HTTP_PROXY: 'http://p:3128', NO_PROXY: '127.0.0.1' })).toBe(null);
    expect(proxyFor(new URL('http://a.example.org/x'), 'env', { HTTP_PROXY: 'http://p:3128', NO_PROXY: '.example.org' })).toBe(null);
    expect(proxyFor(new URL('https://a.example.org/x'), 'env', { HTTP_PROXY: 'http://u:pw@p:3128' })).toBe('p:3128');
    expect(proxyFor(new URL(url), 'none')).toBe(null);
  });
});
