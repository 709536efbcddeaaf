// rsdesk check as people run it: real processes through npx, against the fixture Source.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROKEN_SOURCE, startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import { runRsdesk } from './run-rsdesk.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Through npx, as a person runs it from the project.
const run = (args: string[]) => runRsdesk(args, { cwd: ROOT, command: ['npx', 'node'] });

let fixture: FixtureSource;
beforeAll(async () => {
  fixture = await startFixtureSource({ bigListEntries: 100 });
});
afterAll(async () => {
  await fixture.close();
});

describe('rsdesk check', { timeout: 120_000 }, () => {
  it('checks the whole fixture Source from its home page: summary line, exit 0', async () => {
    const { code, stdout } = await run(['check', `${fixture.url}/`]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^Checked ${fixture.url}/: 18 documents, [\\d,]+ entries, 0 errors, 0 warnings\\n`));
    expect(stdout).toContain('18 documents without findings.');
  });

  it('shows the broken Source findings grouped by document, exit 1', async () => {
    const { code, stdout } = await run(['check', fixture.url + BROKEN_SOURCE.sourceDescription]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^Checked .*: 14 documents, 21 entries, 5 errors, 8 warnings\n/);
    const block = stdout.split('\n\n').find((b) => b.startsWith(fixture.url + BROKEN_SOURCE.changeList));
    expect(block).toBe(
      `${fixture.url + BROKEN_SOURCE.changeList}  (Change List)\n` +
        `  warning up-link-elsewhere: Its rs:ln rel="up" points to ${fixture.url + BROKEN_SOURCE.elsewhere}, but it was reached from the Capability List ${fixture.url + BROKEN_SOURCE.capabilityList}`,
    );
    expect(stdout).toContain(`${fixture.url + BROKEN_SOURCE.refusedPart}  (not read)\n  error   html: Refused:`);
  });

  it('--json prints start, documents, findings and summary; --max-documents stops and says so', async () => {
    const { code, stdout } = await run(['check', fixture.url + BROKEN_SOURCE.sourceDescription, '--json', '--max-documents', '2']);
    expect(code).toBe(0); // the first two documents have warnings only; stopping early is a warning too
    const report = JSON.parse(stdout);
    expect(report.start).toBe(fixture.url + BROKEN_SOURCE.sourceDescription);
    expect(report.documents.map((d: { url: string }) => d.url)).toEqual([
      fixture.url + BROKEN_SOURCE.sourceDescription,
      fixture.url + BROKEN_SOURCE.capabilityList,
    ]);
    expect(Object.keys(report.documents[0])).toEqual(expect.arrayContaining(['url', 'capability', 'entries', 'findings']));
    expect(report.findings.find((f: { code: string }) => f.code === 'document-limit')).toMatchObject({
      document: fixture.url + BROKEN_SOURCE.sourceDescription,
      severity: 'warning',
      line: null,
    });
    expect(report.summary).toMatchObject({ documents: 2, truncated: true });
  });

  it('usage errors exit 2; --help exits 0', async () => {
    const bad = await run(['check', `${fixture.url}/`, '--max-documents', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-documents must be a whole number from 1 to 100,000, not "0"');
    expect((await run(['check'])).code).toBe(2);
    const help = await run(['check', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: rsdesk check <url>');
    expect((await run(['--help'])).stdout).toContain('rsdesk check <url>');
  });
});
