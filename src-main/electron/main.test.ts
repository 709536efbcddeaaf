// The built Electron main bundle (out/main/index.js), run under plain Node with a stand-in for the `electron`
// module: no Electron binary can be had on CI machines, yet the window's hardening, the IPC adapter's argument
// validation and the single-instance lock must not go untested. The real window is tested by e2e/electron.spec.ts
// where Electron exists.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { startFixtureSource } from '../../e2e/fixture-source/index.ts';
import { IPC_INVOKE } from '../contract/names.ts';
import { MirrorState, stateDirOf } from '../engine/mirror/state.ts';
import { CSP } from '../server/csp.ts';

const BUNDLE = resolve(import.meta.dirname, '../../out/main/index.js');
const require = createRequire(import.meta.url);

type Listener = (...args: unknown[]) => unknown;

function fakeElectron(options: { lock: boolean }) {
  const appListeners = new Map<string, Listener[]>();
  const windows: FakeWindow[] = [];
  const opened: string[] = [];
  const handlers = new Map<string, Listener>();
  const calls = {
    quit: 0,
    exit: [] as number[],
    setPath: [] as [string, string][],
    dialogs: [] as unknown[],
    saveDialogs: [] as unknown[],
    /** What the save dialog answers: the file chosen, or null when closed. */
    saveTo: null as string | null,
    openedPaths: [] as string[],
    progress: [] as number[],
  };
  let headersHandler: Listener | undefined;
  let permissionHandler: Listener | undefined;

  class FakeWindow {
    options: { webPreferences: Record<string, unknown> };
    loaded: string | undefined;
    webContents = { send() {}, on() {}, setWindowOpenHandler() {} };
    constructor(options: FakeWindow['options']) {
      this.options = options;
      windows.push(this);
    }
    static getAllWindows = () => windows;
    loadFile(path: string) {
      this.loaded = path;
      return Promise.resolve();
    }
    loadURL(url: string) {
      this.loaded = url;
      return Promise.resolve();
    }
    once() {}
    isDestroyed = () => false;
    isFocused = () => true;
    setProgressBar(value: number) {
      calls.progress.push(value);
    }
    static getFocusedWindow = () => windows[0] ?? null;
  }

  const electron = {
    app: {
      whenReady: () => Promise.resolve(),
      requestSingleInstanceLock: () => options.lock,
      quit: () => void calls.quit++,
      exit: (code: number) => void calls.exit.push(code),
      on: (event: string, listener: Listener) => appListeners.set(event, [...(appListeners.get(event) ?? []), listener]),
      getPath: (name: string) => calls.setPath.findLast(([n]) => n === name)?.[1] ?? join(tmpdir(), 'rsdesk-unset'),
      setPath: (name: string, path: string) => void calls.setPath.push([name, path]),
      getVersion: () => '0.0.0-test',
      getName: () => 'ResourceSync Desktop',
    },
    BrowserWindow: FakeWindow,
    ipcMain: { handle: (channel: string, handler: Listener) => handlers.set(channel, handler) },
    session: {
      defaultSession: {
        webRequest: { onHeadersReceived: (handler: Listener) => (headersHandler = handler) },
        setPermissionRequestHandler: (handler: Listener) => (permissionHandler = handler),
      },
    },
    shell: {
      openExternal: (url: string) => void opened.push(url),
      openPath: async (path: string) => (calls.openedPaths.push(path), ''),
    },
    dialog: {
      showOpenDialog: async (...args: unknown[]) => (calls.dialogs.push(args.at(-1)), { canceled: false, filePaths: ['/chosen/folder'] }),
      showSaveDialog: async (...args: unknown[]) => (calls.saveDialogs.push(args.at(-1)), calls.saveTo === null ? { canceled: true } : { canceled: false, filePath: calls.saveTo }),
    },
    Notification: Object.assign(class {}, { isSupported: () => false }),
    Menu: { buildFromTemplate: (template: unknown) => template, setApplicationMenu() {} },
    // A reversible stand-in for the OS keychain.
    safeStorage: {
      isEncryptionAvailable: () => true,
      encryptString: (plain: string) => Buffer.from(plain, 'utf8').reverse(),
      decryptString: (sealed: Buffer) => Buffer.from(sealed).reverse().toString('utf8'),
    },
  };
  return {
    electron,
    windows,
    opened,
    handlers,
    calls,
    appListeners,
    headers: () => headersHandler,
    permissions: () => permissionHandler,
  };
}

type Fake = ReturnType<typeof fakeElectron>;
const loadHook = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const originalLoad = loadHook._load;

async function startMain(options: { lock: boolean }): Promise<Fake> {
  const fake = fakeElectron(options);
  for (const key of Object.keys(require.cache)) if (key.includes(`${join('out', 'main')}`)) delete require.cache[key];
  loadHook._load = function (request: string, ...rest: unknown[]) {
    return request === 'electron' ? fake.electron : originalLoad.call(this, request, ...rest);
  };
  process.env.RSDESK_USER_DATA = mkdtempSync(join(tmpdir(), 'rsdesk-main-'));
  require(BUNDLE);
  // Startup runs after app.whenReady(); wait until it has wired the IPC handler (or decided not to start).
  for (let i = 0; i < 100 && options.lock && !fake.handlers.has(IPC_INVOKE); i++) await new Promise((r) => setTimeout(r, 10));
  return fake;
}

afterEach(async () => {
  loadHook._load = originalLoad;
  const dir = process.env.RSDESK_USER_DATA;
  delete process.env.RSDESK_USER_DATA;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Quits as Electron does: will-quit, whose listeners may put the quit off (preventDefault); how many did. */
function quit(fake: Fake): number {
  let prevented = 0;
  for (const listener of fake.appListeners.get('will-quit') ?? []) listener({ preventDefault: () => void prevented++ });
  return prevented;
}

const appFrame = { senderFrame: { url: `file://${resolve(import.meta.dirname, '../../out/renderer/index.html')}` } };

describe('Electron main process (built bundle)', () => {
  it('is built', () => {
    expect(existsSync(BUNDLE), `${BUNDLE} is missing: npm test builds it first`).toBe(true);
  });

  it('opens one hardened window loading the built renderer with the preload bridge', async () => {
    const fake = await startMain({ lock: true });
    try {
      expect(fake.windows).toHaveLength(1);
      const prefs = fake.windows[0]!.options.webPreferences;
      expect(prefs).toMatchObject({
        contextIsolation: true,
        sandbox: true,
        nodeIntegration: false,
        webSecurity: true,
        disableBlinkFeatures: 'Auxclick',
      });
      expect(existsSync(prefs.preload as string)).toBe(true);
      expect(fake.windows[0]!.loaded).toMatch(/out[\\/]renderer[\\/]index\.html$/);
      expect(fake.calls.setPath).toEqual([['userData', process.env.RSDESK_USER_DATA]]);

      let headers: Record<string, string[]> = {};
      fake.headers()!({ responseHeaders: { 'X-Other': ['1'] } }, (r: { responseHeaders: typeof headers }) => (headers = r.responseHeaders));
      expect(headers['Content-Security-Policy']).toEqual([CSP]);
      expect(headers['X-Other']).toEqual(['1']);
      let granted: boolean | undefined;
      fake.permissions()!({}, 'geolocation', (ok: boolean) => (granted = ok));
      expect(granted).toBe(false);
    } finally {
      quit(fake);
    }
  });

  it('validates every IPC call and answers only the app window', async () => {
    const fake = await startMain({ lock: true });
    try {
      const invoke = fake.handlers.get(IPC_INVOKE)!;
      expect(await invoke(appFrame, 'app.info', {})).toMatchObject({ ok: true, result: { adapter: 'electron', version: '0.0.0-test' } });
      expect(await invoke(appFrame, 'documents.summary', { url: 'file:///etc/passwd' })).toMatchObject({
        ok: false,
        error: { code: 'invalid-arguments' },
      });
      expect(await invoke(appFrame, 'fs.read', {})).toMatchObject({ ok: false, error: { code: 'unknown-command' } });
      expect(await invoke({ senderFrame: { url: 'https://elsewhere.example/' } }, 'app.info', {})).toMatchObject({ ok: false });
    } finally {
      quit(fake);
    }
  });

  it('chooses a mirror folder with the native dialog and opens one in the file manager', async () => {
    const fake = await startMain({ lock: true });
    const invoke = fake.handlers.get(IPC_INVOKE)!;
    try {
      expect(await invoke(appFrame, 'mirrors.chooseFolder', {})).toMatchObject({ ok: true, result: { supported: true, path: '/chosen/folder' } });
      expect(fake.calls.dialogs).toEqual([expect.objectContaining({ properties: ['openDirectory', 'createDirectory'] })]);
    } finally {
      quit(fake);
    }
  });

  it('exports an audit report to the file chosen in the native save dialog, written by main', async () => {
    const fake = await startMain({ lock: true });
    const invoke = fake.handlers.get(IPC_INVOKE)!;
    try {
      const folder = join(process.env.RSDESK_USER_DATA!, 'mirror');
      const state = new MirrorState(stateDirOf(folder));
      const list = 'https://example.org/resourcelist.xml';
      state.setBinding({ url: list, capabilityListUrl: null, resourceListUrl: list, changeListUrl: null, resourceDumpUrl: null, changeDumpUrl: null, maps: [], allowHosts: [], createdAt: '2026-11-27T00:00:00Z' });
      const run = state.startRun('audit', 'inventory', list);
      state.endRun(run.id, 'completed', { audit: 1 }, 'not in sync');
      const report = { inSync: false, inSyncCount: 0, missing: ['https://example.org/a,b'], extra: [], changed: [], unverifiable: [] };
      state.saveAudit({ runId: run.id, at: '2026-11-27T10:00:00Z', rehash: false, seconds: 1, report });
      state.close();
      expect(await invoke(appFrame, 'mirrors.create', { path: folder })).toMatchObject({ ok: true });
      fake.calls.saveTo = join(process.env.RSDESK_USER_DATA!, 'chosen.csv');
      expect(await invoke(appFrame, 'audit.export', { path: folder, runId: run.id, format: 'csv' })).toEqual({ ok: true, result: { file: fake.calls.saveTo, rows: 1 } });
      expect(fake.calls.saveDialogs).toEqual([
        expect.objectContaining({ defaultPath: join(tmpdir(), 'rsdesk-unset', 'audit-mirror-2026-11-27.csv'), filters: [{ name: 'CSV', extensions: ['csv'] }] }),
      ]);
      expect(readFileSync(fake.calls.saveTo, 'utf8')).toBe('\ufeffstatus,item,reason\r\nmissing,"https://example.org/a,b","listed by the Source, not in the mirror"\r\n');
      // Closed without choosing: nothing written, nothing said to be.
      fake.calls.saveTo = null;
      expect(await invoke(appFrame, 'audit.export', { path: folder, runId: run.id, format: 'json' })).toEqual({ ok: true, result: { file: null, rows: 0 } });
    } finally {
      quit(fake);
    }
  });

  it('seals the bearer token with the OS keychain before it reaches the database', async () => {
    const fake = await startMain({ lock: true });
    const invoke = fake.handlers.get(IPC_INVOKE)!;
    try {
      expect(await invoke(appFrame, 'settings.set', { bearerToken: 'secret-token-42', tokenOrigin: 'https://example.org' })).toMatchObject({
        ok: true,
        result: { bearerToken: 'secret-token-42' },
      });
      expect(await invoke(appFrame, 'settings.get', {})).toMatchObject({ result: { bearerToken: 'secret-token-42' } });
      const db = new DatabaseSync(join(process.env.RSDESK_USER_DATA!, 'rsdesk.sqlite'));
      const rows = db.prepare('SELECT value FROM settings').all() as { value: string }[];
      db.close();
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(String(row.value)).not.toContain('secret-token-42');
    } finally {
      quit(fake);
    }
  });

  it('keeps every web contents in the app: new windows denied, outside links to the system browser', async () => {
    const fake = await startMain({ lock: true });
    try {
      const contentsListeners = new Map<string, Listener>();
      let openHandler: Listener | undefined;
      const contents = {
        setWindowOpenHandler: (h: Listener) => (openHandler = h),
        on: (event: string, h: Listener) => contentsListeners.set(event, h),
      };
      for (const listener of fake.appListeners.get('web-contents-created') ?? []) listener({}, contents);
      expect(openHandler!({ url: 'https://www.openarchives.org/rs/' })).toEqual({ action: 'deny' });
      expect(openHandler!({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
      expect(openHandler!({ url: 'javascript:alert(1)' })).toEqual({ action: 'deny' });
      expect(fake.opened).toEqual(['https://www.openarchives.org/rs/']);

      let prevented = 0;
      const event = { preventDefault: () => void prevented++ };
      contentsListeners.get('will-navigate')!(event, 'https://example.org/');
      expect(prevented).toBe(1);
      contentsListeners.get('will-navigate')!(event, appFrame.senderFrame.url);
      expect(prevented).toBe(1);
      contentsListeners.get('will-attach-webview')!(event);
      expect(prevented).toBe(2);
    } finally {
      quit(fake);
    }
  });

  it('quitting while a run goes on waits for it to pause, then exits: the run is recorded paused, for Resume', async () => {
    const fixture = await startFixtureSource({ resources: 40, resourceDelayMs: 300 });
    const fake = await startMain({ lock: true });
    const invoke = fake.handlers.get(IPC_INVOKE)!;
    try {
      const folder = join(process.env.RSDESK_USER_DATA!, 'mirror');
      expect(await invoke(appFrame, 'mirrors.create', { url: fixture.url + fixture.paths.dataset1.capabilityList, path: folder, concurrency: 2 })).toMatchObject({ ok: true });
      expect(await invoke(appFrame, 'runs.start', { path: folder })).toMatchObject({ ok: true });
      for (let i = 0; i < 500 && !fixture.requests.some((r) => r.path.includes('/res/')); i++) await new Promise((r) => setTimeout(r, 10));
      // Before, Electron quit as soon as will-quit returned: the run was cut off as by a kill, left "running".
      expect(quit(fake)).toBe(1);
      expect(fake.calls.exit).toEqual([]);
      for (let i = 0; i < 500 && fake.calls.exit.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(fake.calls.exit).toEqual([0]);
      const state = new MirrorState(stateDirOf(folder));
      try {
        expect(state.runs()).toMatchObject([{ id: 1, status: 'interrupted', message: 'Paused: the app was closed while the run went on; Resume takes it up where it stopped.' }]);
      } finally {
        state.close();
      }
      // A second quit meanwhile would not have waited: the first one is under way, or done.
      expect(quit(fake)).toBe(0);
    } finally {
      await fixture.close();
    }
  });

  it('quits at once when another instance holds the lock', async () => {
    const fake = await startMain({ lock: false });
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.calls.quit).toBe(1);
    expect(fake.windows).toHaveLength(0);
    expect(fake.handlers.size).toBe(0);
  });
});
