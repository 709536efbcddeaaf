// The CLI as people run it: a real process started through npx (the project's Node 22), against the fixture
// Source and the project's own test documents (fixtures/documents).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'rsdesk.mjs');
const DOCUMENTS = join(ROOT, 'fixtures', 'documents');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn('npx', ['node', BIN, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = start(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Every test starts real processes through npx; on a busy machine that is slow, not wrong.
let fixture: FixtureSource;
let quiet: FixtureSource;
let tmp: string;

beforeAll(async () => {
  fixture = await startFixtureSource({ bigListParts: 2, bigListEntries: 20_000 });
  quiet = await startFixtureSource({ routes: { wellKnown: false, htmlLink: false, linkHeader: false, robots: false }, bigListEntries: 10 });
  tmp = mkdtempSync(join(tmpdir(), 'rsdesk-cli-'));
});
afterAll(async () => {
  await fixture.close();
  await quiet.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('rsdesk: help, version and usage errors', { timeout: 120_000 }, () => {
  it('prints help and the version with exit code 0', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('rsdesk discover <url>');
    expect(help.stdout).toContain('rsdesk serve');
    const sub = await run(['inspect', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('Usage: rsdesk inspect <url-or-file>');
    // rsdesk help <command> is the command's help, not the list of commands again.
    expect(help.stdout).toContain('rsdesk retry --dest <dir> [--run ID | --all]');
    const retry = await run(['help', 'retry']);
    expect(retry).toMatchObject({ code: 0, stderr: '' });
    expect(retry.stdout.startsWith('Usage: rsdesk retry --dest <dir> [--run ID | --all] [--json] [--quiet] [--concurrency N]')).toBe(true);
    const typo = await run(['help', 'retyr']);
    expect(typo.code).toBe(2);
    expect(typo.stderr.split('\n')[0]).toBe('rsdesk: unknown command retyr (did you mean retry?)');
    const version = await run(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    expect(version.stderr).not.toContain('ExperimentalWarning');
  });

  it('exits 2 on usage errors, saying what is wrong', async () => {
    const cases: [string[], RegExp][] = [
      [[], /missing command/],
      [['bogus'], /unknown command bogus\n/],
      [['discover'], /missing URL/],
      [['discover', 'http://127.0.0.1:1/', '--nope'], /unknown option --nope\n/],
      [['inspect', 'a.xml', 'b.xml'], /expected one URL or file/],
      [['discover', 'http://127.0.0.1:1/', '--timeout', 'soon'], /--timeout/],
      [['discover', 'mailto:x@127.0.0.1'], /rsdesk: .*mailto:x@127\.0\.0\.1/],
      [['serve', '--port', '99999'], /--port/],
      [['serve', 'extra'], /serve takes no arguments/],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });
});

describe('rsdesk discover', { timeout: 120_000 }, () => {
  it('--json prints the DiscoveryResult and exits 0 for a Source without errors', async () => {
    const result = await run(['discover', fixture.url + '/', '--json']);
    expect(result.stderr).not.toMatch(/Error|Warning/);
    const json = JSON.parse(result.stdout);
    expect(Object.keys(json)).toEqual(['start', 'routes', 'sourceDescription', 'capabilityLists', 'findings']);
    expect(json.start).toBe(fixture.url + '/');
    expect(json.sourceDescription).toBe(fixture.sourceDescriptionUrl);
    for (const route of json.routes) expect(route).toEqual(expect.objectContaining({ route: expect.any(String), url: expect.any(String), found: expect.any(Boolean) }));
    expect(json.routes.some((r: { found: boolean }) => r.found)).toBe(true);
    const lists = json.capabilityLists as { url: string; capabilities: { capability: string; url: string; hub?: string }[] }[];
    expect(lists.map((l) => l.url)).toEqual(
      expect.arrayContaining([fixture.url + fixture.paths.dataset1.capabilityList, fixture.url + fixture.paths.dataset2.capabilityList]),
    );
    const d1 = lists.find((l) => l.url === fixture.url + fixture.paths.dataset1.capabilityList)!;
    expect(d1.capabilities.find((c) => c.capability === 'change-notification')?.hub).toBe(fixture.url + fixture.paths.hub);
    expect(json.findings.filter((f: { severity: string }) => f.severity === 'error')).toEqual([]);
    expect(result.code).toBe(0);
  });

  it('prints a readable summary without --json', async () => {
    const result = await run(['discover', fixture.url + '/']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Discovery from ${fixture.url}/`);
    expect(result.stdout).toContain('✓');
    expect(result.stdout).toContain(`Source Description: ${fixture.sourceDescriptionUrl}`);
    expect(result.stdout).toContain(`Capability List ${fixture.url}${fixture.paths.dataset2.capabilityList}`);
    expect(result.stdout).toMatch(/Findings: /);
  });

  it('exits 1 when no Source is found', async () => {
    const result = await run(['discover', quiet.url + '/about.html', '--json']);
    expect(result.code).toBe(1);
    const json = JSON.parse(result.stdout);
    expect(json.sourceDescription).toBeNull();
    expect(json.capabilityLists).toEqual([]);
    const text = await run(['discover', quiet.url + '/about.html']);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('✗');
    expect(text.stdout).toContain('No ResourceSync Source found.');
  });

  it('sends --token as a bearer token', async () => {
    const before = fixture.requests.length;
    const result = await run(['discover', fixture.url + fixture.paths.dataset2.capabilityList, '--json', '--token', 'cli-token', '--timeout', '5']);
    expect(result.code).toBe(0);
    const made = fixture.requests.slice(before);
    expect(made.length).toBeGreaterThan(0);
    expect(made.every((r) => r.headers.authorization === 'Bearer cli-token')).toBe(true);
  });
});

describe('rsdesk inspect', { timeout: 120_000 }, () => {
  // Warnings only (two malformed hashes): a missing up link would be an error now.
  const warningsOnly = join(DOCUMENTS, 'findings/invalid-hash.xml');

  it('--json summarises a local file and exits 0 when nothing is an error', async () => {
    const result = await run(['inspect', warningsOnly, '--json']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(Object.keys(json)).toEqual(['url', 'root', 'capability', 'md', 'links', 'entries', 'findings']);
    expect(json).toMatchObject({
      root: 'urlset',
      capability: 'resourcelist',
      md: { capability: 'resourcelist', at: '2013-01-03T09:00:00Z' },
      links: [{ rel: 'up', href: 'http://example.com/dataset1/capabilitylist.xml' }],
      entries: 2,
    });
    expect(json.findings.map((f: { code: string }) => f.code)).toEqual(['invalid-hash', 'invalid-hash']);
    for (const finding of json.findings) {
      expect(finding).toEqual(expect.objectContaining({ severity: expect.any(String), message: expect.any(String), code: expect.any(String) }));
      expect(finding.severity).toBe('warning');
    }
  });

  it('exits 1 when a finding is an error', async () => {
    const result = await run(['inspect', join(DOCUMENTS, 'findings/relative-loc.xml'), '--json']);
    expect(result.code).toBe(1);
    const json = JSON.parse(result.stdout);
    expect(json.capability).toBe('capabilitylist');
    expect(json.findings.some((f: { severity: string; line?: number }) => f.severity === 'error' && typeof f.line === 'number')).toBe(true);
    const text = await run(['inspect', join(DOCUMENTS, 'findings/relative-loc.xml')]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('Capability List (<urlset>), 2 entries');
    expect(text.stdout).toMatch(/error +\S+: /);
  });

  it('exits 1 on a refused document, with an error field in JSON, saying why once', async () => {
    const sitemap = await run(['inspect', join(DOCUMENTS, 'refusals/missing-md.xml'), '--json']);
    expect(sitemap.code).toBe(1);
    const json = JSON.parse(sitemap.stdout);
    expect(json.error).toMatchObject({ severity: 'error', code: 'missing-md' });
    expect(json.findings).toEqual([json.error]);
    expect(sitemap.stderr).not.toContain('rsdesk:');
    const notXml = await run(['inspect', join(DOCUMENTS, 'refusals/not-xml.txt')]);
    expect(notXml.code).toBe(1);
    expect(notXml.stdout).toContain('refused');
    expect(notXml.stdout).toMatch(/error +not-xml: /);
    expect(notXml.stderr).not.toContain('rsdesk:');
    // The reason once, its line once.
    expect(notXml.stdout.split('is not an XML document').length, notXml.stdout).toBe(2);
    expect(notXml.stdout.split('line 2').length, notXml.stdout).toBe(2);
    const missing = await run(['inspect', join(tmp, 'nothing-here.xml'), '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout).error).toMatchObject({ code: 'io', message: `no such file: ${join(tmp, 'nothing-here.xml')}` });
  });

  it('streams a 20,000-entry document from a URL', async () => {
    const url = fixture.url + fixture.paths.dataset2.resourceListPart(1);
    const result = await run(['inspect', url, '--json']);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({ url, capability: 'resourcelist', root: 'urlset', entries: 20_000 });
    expect(json.links.map((l: { rel: string }) => l.rel)).toEqual(['up', 'index']);
    expect(result.code).toBe(json.findings.some((f: { severity: string }) => f.severity === 'error') ? 1 : 0);
    const text = await run(['inspect', url]);
    expect(text.stdout).toContain('Resource List (<urlset>), 20000 entries');
    expect(text.stdout).toContain(`up → ${fixture.url}${fixture.paths.dataset2.capabilityList}`);
  });

  it('exits 1 when the URL cannot be fetched', async () => {
    const result = await run(['inspect', fixture.url + '/no/such.xml', '--json']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error).toMatchObject({ severity: 'error', code: 'http-status', message: expect.stringContaining('404') });
    expect(result.stderr).not.toContain('rsdesk:');
    // Nothing was read: the one line on stderr is all there is to say (npx may add warnings of its own).
    const text = await run(['inspect', fixture.url + '/no/such.xml']);
    expect(text).toMatchObject({ code: 1, stdout: '' });
    expect(text.stderr.split('\n').filter((line) => line.startsWith('rsdesk:'))).toEqual([`rsdesk: HTTP 404 Not Found for ${fixture.url}/no/such.xml`]);
  });
});

describe('rsdesk serve', { timeout: 120_000 }, () => {
  function renderer(): string {
    const dir = join(tmp, `renderer-${Math.random().toString(36).slice(2)}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>served</title>');
    return dir;
  }

  // serve is started without npx here: npm does not pass SIGTERM on to the command it runs (a terminal's Ctrl+C
  // reaches the whole process group, so people are not affected). The binary is the same Node 22 npx picks.
  // SIGHUP (a closed terminal or ssh session) had killed it at once; now it stops as for the others, exit 129.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`prints the URL, answers /api/invoke with the token and stops cleanly on ${signal}`, async () => {
      const dataDir = join(tmp, `data-${signal}`);
      const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir], {
        cwd: ROOT,
        env: { ...process.env, RSDESK_RENDERER_DIR: renderer() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      try {
        const line = await new Promise<string>((resolve, reject) => {
          child.stdout.setEncoding('utf8').on('data', (c: string) => {
            stdout += c;
            if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
          });
          child.on('close', () => reject(new Error(`serve exited early: ${stderr}`)));
        });
        const match = /^ResourceSync Desktop at (http:\/\/127\.0\.0\.1:(\d+)\/)#token=([0-9a-f]{64})$/.exec(line);
        expect(match, line).not.toBeNull();
        const [, origin, , token] = match!;
        const page = await fetch(origin!);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('<title>served</title>');
        const refused = await fetch(origin + 'api/invoke', { method: 'POST', body: JSON.stringify({ command: 'app.info', args: {} }) });
        expect(refused.status).toBe(401);
        const answer = await fetch(origin + 'api/invoke', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ command: 'app.info', args: {} }),
        });
        expect(await answer.json()).toEqual({
          ok: true,
          // Mirrors' credentials: in the data folder, in clear (mode 600); the app's Settings says so.
          result: { name: 'ResourceSync Desktop', version: VERSION, adapter: 'http', platform: process.platform, secrets: { sealed: false, description: expect.stringMatching(/^unsealed \(in clear, readable only by your user account\) in .*mirror-secrets\.json$/) } },
        });
        const saved = await fetch(origin + 'api/invoke', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({ command: 'settings.set', args: { timeoutMs: 7000 } }),
        });
        expect(await saved.json()).toEqual({ ok: true, result: { bearerToken: null, tokenOrigin: null, timeoutMs: 7000 } });
        child.kill(signal);
        expect(await exited).toBe(signal === 'SIGHUP' ? 129 : 0);
        expect(stderr).toBe('');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
      // The store was written to the data folder.
      expect(readFileSync(join(dataDir, 'rsdesk.sqlite')).subarray(0, 15).toString()).toBe('SQLite format 3');
    });
  }

  it('says to build first when the renderer is missing', async () => {
    const result = await run(['serve', '--data-dir', join(tmp, 'data2')], { RSDESK_RENDERER_DIR: join(tmp, 'not-built') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('run npm run build first');
  });
});
