// audit.export through the service's dispatch, as adapters call it: every item of a kept report (far more than the
// 10,000 of each kind the window holds) written to a file as JSON or CSV, the table's filter, the file's path checked,
// the desktop app's save dialog, and a report that newer audits replaced.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFixtureSource, type FixtureSource } from '../../e2e/fixture-source/index.ts';
import type { CommandName } from '../contract/names.ts';
import type { AuditView, Events } from '../contract/types.ts';
import { KEPT_AUDIT_REPORTS, MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import { openStore } from '../store/store.ts';
import type { Envelope } from './dispatch.ts';
import { createService, type Service, type ServiceDeps } from './service.ts';

let fixture: FixtureSource;
let dir: string;
let mirror: string;
let service: Service;
let progress: Events['audit.exportProgress'][] = [];

function open(extra: Partial<ServiceDeps> = {}): Service {
  const s = createService({ store: openStore(join(dir, 'app.sqlite')), adapter: 'http', version: '0.0.0', log: () => undefined, progressIntervalMs: 0, ...extra });
  s.events.subscribe((name, payload) => {
    if (name === 'audit.exportProgress') progress.push(payload as Events['audit.exportProgress']);
  });
  return s;
}

async function call<T>(command: CommandName, args: unknown): Promise<T> {
  const envelope: Envelope = await service.dispatch(command, args);
  if (!envelope.ok) throw Object.assign(new Error(envelope.error.message), { code: envelope.error.code });
  return envelope.result as T;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

async function fails(command: CommandName, args: unknown): Promise<{ code: string; message: string }> {
  const envelope = await service.dispatch(command, args);
  expect(envelope.ok, `${command} should fail`).toBe(false);
  return (envelope as { error: { code: string; message: string } }).error;
}

const MISSING = 25_000;
/** Items a spreadsheet or a CSV reader gets wrong unless they are quoted and defused. */
const HOSTILE = ['http://x/a,b', 'http://x/"quoted"', 'http://x/line\nbreak', '=HYPERLINK("http://evil")', '+1', '-2', '@SUM(A1)', 'http://x/ünïcode'];
const missingUri = (i: number) => (i < HOSTILE.length ? HOSTILE[i]! : `http://x/r/${i}`);

/** Saves an audit report in the mirror's state as an audit does: `missing` items, a few of each other kind, a note. */
function saveReport(missing = MISSING): number {
  const state = new MirrorState(stateDirOf(mirror));
  try {
    const run = state.startRun('audit', 'inventory', null);
    state.endRun(run.id, 'completed', { audit: 1 }, 'not in sync');
    const items = function* () {
      for (let i = 0; i < missing; i++) yield { status: 'missing', item: missingUri(i), reason: null };
      yield { status: 'extra', item: 'host/extra, "one".txt', reason: null };
      yield { status: 'changed', item: 'http://x/c', reason: 'length 3, listed "4"' };
      yield { status: 'unverifiable', item: 'http://x/u', reason: 'hash algorithm sha-512 unknown' };
      yield { status: 'kept', item: 'http://x/k', reason: null };
    };
    const report = { inSync: false, inSyncCount: 7, missing: [], extra: [], changed: [], unverifiable: [], kept: [], notes: ['The Change List could not be read.'] };
    state.saveAudit({ runId: run.id, at: '2026-11-27T10:00:00.000Z', rehash: false, seconds: 1, report }, items());
    return run.id;
  } finally {
    state.close();
  }
}

/** RFC 4180, as a spreadsheet reads it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      (row = []), (field = ''), i++;
    } else field += c;
  }
  expect(field === '' && row.length === 0, 'the CSV ends with a line end').toBe(true);
  return rows;
}

beforeAll(async () => {
  fixture = await startFixtureSource({ resources: 3 });
});
afterAll(async () => {
  await fixture.close();
});
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-audit-export-'));
  mirror = join(dir, 'mirror');
  progress = [];
  service = open();
  await call('mirrors.create', { url: fixture.url + fixture.paths.dataset1.capabilityList, path: mirror, deletePolicy: 'quarantine' });
});
afterEach(async () => {
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('audit.export', () => {
  it('writes every item of a report far longer than the window holds, as CSV quoted and defused', async () => {
    const runId = saveReport();
    // The window's copy holds the first 10,000 missing.
    const view = await call<AuditView>('audit.report', { path: mirror });
    expect(view.report.missing).toHaveLength(10_000);
    const file = join(dir, 'report.csv');
    expect(await call('audit.export', { path: mirror, runId, format: 'csv', file })).toEqual({ file, rows: MISSING + 4 });
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('\ufeffstatus,item,reason\r\n')).toBe(true);
    const rows = parseCsv(text.slice(1));
    expect(rows[0]).toEqual(['status', 'item', 'reason']);
    expect(rows).toHaveLength(MISSING + 5);
    expect(rows.every((r) => r.length === 3)).toBe(true);
    const missing = rows.filter((r) => r[0] === 'missing').map((r) => r[1]);
    // Cells a spreadsheet would run as formulas start with a quote (as the check report's CSV does); the rest as they are.
    const expected = Array.from({ length: MISSING }, (_, i) => missingUri(i)).map((uri) => (/^[=+\-@]/.test(uri) ? `'${uri}` : uri));
    expect(missing).toEqual(expected);
    expect(rows.slice(-4)).toEqual([
      ['changed', 'http://x/c', 'length 3, listed "4"'],
      ['unverifiable', 'http://x/u', 'hash algorithm sha-512 unknown'],
      ['extra', 'host/extra, "one".txt', 'in the mirror, listed by no one'],
      // The mirror's own deletion policy says what becomes of it.
      ['kept', 'http://x/k', 'no longer listed by the Source; its file is still in the mirror, and the next sync moves it to quarantine (.resourcesync/quarantine/)'],
    ]);
    // Progress went out while it was written, and the last says all was read.
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toEqual({ path: mirror, runId, file, read: MISSING + 4, total: MISSING + 4 });
    // Nothing but the file is left beside it.
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('writes every item as JSON, in the shape of rsdesk audit --json, with what the file needs to be read alone', async () => {
    const runId = saveReport();
    const file = join(dir, 'report.json');
    expect(await call('audit.export', { path: mirror, runId, format: 'json', file })).toEqual({ file, rows: MISSING + 4 });
    const text = readFileSync(file, 'utf8');
    const json = JSON.parse(text);
    // Written a piece at a time, the same text as JSON.stringify would write whole.
    expect(text).toBe(`${JSON.stringify(json, null, 2)}\n`);
    expect(json).toEqual({
      mirror,
      source: fixture.url + fixture.paths.dataset1.capabilityList,
      at: '2026-11-27T10:00:00.000Z',
      rehash: false,
      filter: null,
      inSync: false,
      inSyncCount: 7,
      missing: Array.from({ length: MISSING }, (_, i) => missingUri(i)),
      extra: ['host/extra, "one".txt'],
      changed: [{ uri: 'http://x/c', reason: 'length 3, listed "4"' }],
      unverifiable: [{ uri: 'http://x/u', reason: 'hash algorithm sha-512 unknown' }],
      kept: ['http://x/k'],
      // The audit's own note; not the one that says the window shows only part of it.
      notes: ['The Change List could not be read.'],
    });
  });

  it('writes only what the filter lets through, searching the whole report, and says which filter in the JSON', async () => {
    const runId = saveReport();
    const csv = join(dir, 'filtered.csv');
    // The 24,000th missing item is far past what the window holds.
    expect(await call('audit.export', { path: mirror, runId, format: 'csv', file: csv, filter: { status: 'missing', text: ' R/24000 ' } })).toEqual({ file: csv, rows: 1 });
    expect(parseCsv(readFileSync(csv, 'utf8').slice(1))).toEqual([['status', 'item', 'reason'], ['missing', 'http://x/r/24000', 'listed by the Source, not in the mirror']]);
    const json = join(dir, 'filtered.json');
    await call('audit.export', { path: mirror, runId, format: 'json', file: json, filter: { status: 'all', text: 'quarantine' } });
    expect(JSON.parse(readFileSync(json, 'utf8'))).toMatchObject({ filter: { status: 'all', text: 'quarantine' }, missing: [], extra: [], changed: [], unverifiable: [], kept: ['http://x/k'] });
    // An empty filter is none.
    const all = join(dir, 'all.json');
    await call('audit.export', { path: mirror, runId, format: 'json', file: all, filter: { status: 'all', text: '  ' } });
    expect(JSON.parse(readFileSync(all, 'utf8'))).toMatchObject({ filter: null });
  });

  it('checks the file it is given, and writes nothing when it cannot', async () => {
    const runId = saveReport(3);
    const taken = join(dir, 'taken.csv');
    writeFileSync(taken, 'mine');
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv', file: taken })).toMatchObject({ code: 'invalid-arguments', message: `A file ${taken} is there already: give another name, or remove it first.` });
    expect(readFileSync(taken, 'utf8')).toBe('mine');
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv', file: dir })).toMatchObject({ code: 'invalid-arguments', message: `${dir} is a folder: give the full path of a file to write, with its name.` });
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv', file: 'report.csv' })).toMatchObject({ code: 'invalid-arguments', message: `Give the file's full path ("report.csv" is relative).` });
    const nowhere = join(dir, 'no-such-folder', 'report.csv');
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv', file: nowhere })).toMatchObject({
      code: 'mirror',
      message: `The audit report could not be written to ${nowhere}: the folder ${join(dir, 'no-such-folder')} does not exist. Nothing was written there.`,
    });
    // Not in the mirror's state folder, where it could take the place of the state.
    const state = join(mirror, '.resourcesync', 'state.sqlite');
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv', file: state })).toMatchObject({ code: 'invalid-arguments', message: `${state} is inside the mirror's own state folder (.resourcesync): choose a file elsewhere.` });
    // In a browser there is no save dialog: the page gives the path.
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv' })).toMatchObject({ code: 'invalid-arguments', message: 'Give the full path of the file to write.' });
    // The contract's own checks.
    expect(await fails('audit.export', { path: mirror, runId, format: 'xlsx', file: join(dir, 'x') })).toMatchObject({ code: 'invalid-arguments', message: 'Choose JSON or CSV.' });
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv', file: join(dir, 'a\0b') })).toMatchObject({ code: 'invalid-arguments', message: 'The file path contains a NUL character.' });
    expect(await fails('audit.export', { path: mirror, runId: 0, format: 'csv', file: join(dir, 'x') })).toMatchObject({ code: 'invalid-arguments', message: 'Choose the audit report to export.' });
    expect(await fails('audit.export', { path: join(dir, 'elsewhere'), runId, format: 'csv', file: join(dir, 'x') })).toMatchObject({ code: 'not-found' });
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
  });

  it('says so when newer audits have replaced the report shown', async () => {
    const first = saveReport(2);
    for (let i = 0; i < KEPT_AUDIT_REPORTS; i++) saveReport(2);
    const file = join(dir, 'old.csv');
    expect(await fails('audit.export', { path: mirror, runId: first, format: 'csv', file })).toMatchObject({
      code: 'not-found',
      message: 'This audit report is no longer kept in the mirror: newer audits have replaced it (a mirror keeps its newest five). The newest report is shown now; export that one.',
    });
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
    // Its folder gone: said so, not as a failure inside the app.
    rmSync(join(mirror, '.resourcesync'), { recursive: true });
    expect(await fails('audit.export', { path: mirror, runId: first, format: 'csv', file })).toMatchObject({
      code: 'mirror',
      message: `The audit report kept in ${mirror} cannot be read: ${mirror} is not a mirror (no .resourcesync/state.sqlite)`,
    });
  });

  it('cancels an export under way: the partial file is removed, the file chosen is left as it was, said plainly', async () => {
    const runId = saveReport();
    await service.close();
    const file = join(dir, 'kept.json');
    writeFileSync(file, 'old');
    // The desktop app's save dialog, which lets the person replace a file there already.
    service = open({ adapter: 'electron', chooseSaveFile: async () => file });
    expect(await call('audit.exportCancel', { path: mirror })).toEqual({ cancelled: false });
    progress = [];
    const writing = service.dispatch('audit.export', { path: mirror, runId, format: 'json' });
    // Once it has read part of the report (the temporary file is there then).
    await until(() => progress.some((p) => p.read > 0));
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toHaveLength(1);
    expect(await call('audit.exportCancel', { path: mirror })).toEqual({ cancelled: true });
    expect(await writing).toMatchObject({ ok: false, error: { code: 'cancelled', message: `Export cancelled. Nothing was written to ${file}.` } });
    expect(readFileSync(file, 'utf8')).toBe('old');
    expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
    // Nothing is left to cancel, and the next export is whole.
    expect(await call('audit.exportCancel', { path: mirror })).toEqual({ cancelled: false });
    expect(await call('audit.export', { path: mirror, runId, format: 'json' })).toEqual({ file, rows: MISSING + 4 });
  });

  it('asks for the file with the desktop app\'s save dialog, offering a name, and writes nothing when it is closed', async () => {
    const runId = saveReport(2);
    await service.close();
    const file = join(dir, 'chosen.csv');
    writeFileSync(file, 'old');
    const asked: [string, string][] = [];
    let answer: string | null = file;
    service = open({
      adapter: 'electron',
      chooseSaveFile: async (name, format) => {
        asked.push([name, format]);
        return answer;
      },
    });
    // The dialog asked before a file there already was chosen: it is replaced.
    expect(await call('audit.export', { path: mirror, runId, format: 'csv' })).toEqual({ file, rows: 6 });
    expect(asked).toEqual([['audit-mirror-2026-11-27.csv', 'csv']]);
    expect(readFileSync(file, 'utf8')).toContain('\r\nmissing,"http://x/""quoted""","listed by the Source, not in the mirror"\r\n');
    answer = null;
    expect(await call('audit.export', { path: mirror, runId, format: 'json' })).toEqual({ file: null, rows: 0 });
    // The dialog let the person choose to replace the mirror's state: refused all the same.
    answer = join(mirror, '.resourcesync', 'state.sqlite');
    expect(await fails('audit.export', { path: mirror, runId, format: 'csv' })).toMatchObject({ code: 'invalid-arguments' });
    expect((await call<AuditView>('audit.report', { path: mirror })).report.runId).toBe(runId);
  });
});
