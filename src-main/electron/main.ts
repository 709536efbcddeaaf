// Electron main process: one hardened window, the IPC adapter of the contract, and nothing of the engine
// beyond wiring (the engine itself never imports electron).
import { basename, join } from 'node:path';
import { app, BrowserWindow, dialog, ipcMain, Notification, safeStorage, session, shell, type WebContents } from 'electron';
import { IPC_EVENT, IPC_INVOKE } from '../contract/names.ts';
import { createService } from '../app/service.ts';
import { CSP } from '../server/csp.ts';
import { openStore, type SecretBox } from '../store/store.ts';
import { FileSecretStore } from '../engine/mirror/secrets.ts';
import { installMenu } from './menu.ts';
import { noticeFor, RunStatus } from './run-status.ts';
import type { MirrorProgress, MirrorRunEnd } from '../contract/types.ts';
import { tuneTiering } from '../engine/tiering.ts';

// The engine runs in this process: when V8 optimizes its hot code (engine/tiering.ts says why).
tuneTiering();

/** How long quitting waits for the runs going on to pause before the app quits anyway (the next start resumes them). */
const QUIT_WAIT_MS = 10_000;

const devServerUrl = process.env.ELECTRON_RENDERER_URL;
const rendererIndex = join(__dirname, '../renderer/index.html');

function isAppUrl(url: string): boolean {
  if (devServerUrl) return url.startsWith(devServerUrl);
  try {
    const u = new URL(url);
    return u.protocol === 'file:' && decodeURIComponent(u.pathname).endsWith('/renderer/index.html');
  } catch {
    return false;
  }
}

function openExternalSafely(url: string): void {
  try {
    const { protocol } = new URL(url);
    if (protocol === 'http:' || protocol === 'https:' || protocol === 'mailto:') void shell.openExternal(url);
  } catch {
    // Not a URL: nothing to open.
  }
}

function harden(contents: WebContents): void {
  // Links outside the app open in the system browser; the window itself never navigates away.
  contents.setWindowOpenHandler(({ url }) => {
    openExternalSafely(url);
    return { action: 'deny' };
  });
  contents.on('will-navigate', (event, url) => {
    if (isAppUrl(url)) return;
    event.preventDefault();
    openExternalSafely(url);
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** The bearer token is sealed with the OS keychain (Keychain, DPAPI, libsecret) where one is available. */
function keychainBox(): SecretBox | undefined {
  if (!safeStorage.isEncryptionAvailable()) return undefined;
  return {
    seal: (plain) => safeStorage.encryptString(plain).toString('base64'),
    open: (sealed) => safeStorage.decryptString(Buffer.from(sealed, 'base64')),
  };
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1400,
    height: 900,
    minWidth: 900,
    minHeight: 560,
    show: false,
    title: 'ResourceSync Desktop',
    webPreferences: {
      preload: join(__dirname, '../preload/index.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
      // A middle click would otherwise open links in new windows behind the window-open handler's back
      // (Electron's security checklist; scanners flag it).
      disableBlinkFeatures: 'Auxclick',
    },
  });
  win.once('ready-to-show', () => win.show());
  if (devServerUrl) void win.loadURL(devServerUrl);
  else void win.loadFile(rendererIndex);
  return win;
}

async function start(): Promise<void> {
  await app.whenReady();
  installMenu();

  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CSP] } });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  app.on('web-contents-created', (_event, contents) => harden(contents));

  const box = keychainBox();
  const store = openStore(join(app.getPath('userData'), 'rsdesk.sqlite'), { secrets: box });
  // Each mirror's token or password, outside the mirror folder, every value sealed by the same keychain box (in
  // clear, mode 600, where the system offers no keychain; Settings says which).
  const mirrorSecrets = new FileSecretStore(join(app.getPath('userData'), 'mirror-secrets.json'), box);
  const service = createService({
    store,
    adapter: 'electron',
    version: app.getVersion(),
    openExternal: (url) => shell.openExternal(url),
    live: { dataDir: app.getPath('userData') },
    mirrorSecrets,
    chooseFolder: async () => {
      const parent = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
      const options = { title: 'Choose the mirror folder', properties: ['openDirectory', 'createDirectory'] as Array<'openDirectory' | 'createDirectory'> };
      const chosen = parent ? await dialog.showOpenDialog(parent, options) : await dialog.showOpenDialog(options);
      return chosen.canceled || chosen.filePaths.length === 0 ? null : chosen.filePaths[0];
    },
    chooseSaveFile: async (name, format) => {
      const parent = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
      const options = {
        title: 'Export the audit report',
        defaultPath: join(app.getPath('downloads'), name),
        filters: [format === 'csv' ? { name: 'CSV', extensions: ['csv'] } : { name: 'JSON', extensions: ['json'] }],
        properties: ['createDirectory', 'showOverwriteConfirmation'] as Array<'createDirectory' | 'showOverwriteConfirmation'>,
      };
      const chosen = parent ? await dialog.showSaveDialog(parent, options) : await dialog.showSaveDialog(options);
      return chosen.canceled || !chosen.filePath ? null : chosen.filePath;
    },
    openPath: (path) => shell.openPath(path),
  });
  void service.startLive();

  ipcMain.handle(IPC_INVOKE, (event, command: unknown, args: unknown) => {
    // Only our own renderer may call the engine, never a frame that navigated elsewhere.
    const frameUrl = event.senderFrame?.url ?? '';
    if (!isAppUrl(frameUrl)) {
      return { ok: false, error: { code: 'unknown-command', message: 'Caller is not the application window' } };
    }
    return service.dispatch(command, args);
  });

  let win = createWindow();
  // Mirror runs show outside the window too: progress on the taskbar/dock icon, a notification when a long run ends
  // while the window is in the background (run-status.ts decides; these lines only apply it).
  const runStatus = new RunStatus();
  const showRunStatus = () => {
    for (const w of BrowserWindow.getAllWindows()) w.setProgressBar?.(runStatus.taskbarValue());
  };
  const unsubscribe = service.events.subscribe((name, payload) => {
    for (const w of BrowserWindow.getAllWindows()) w.webContents.send(IPC_EVENT, name, payload);
    if (name === 'mirror.progress') {
      runStatus.progress(payload as MirrorProgress);
      showRunStatus();
    } else if (name === 'mirror.ended' || name === 'audit.ended') {
      const end = payload as MirrorRunEnd;
      runStatus.ended(end.path);
      showRunStatus();
      const focused = BrowserWindow.getAllWindows().some((w) => w.isFocused?.());
      const notice = noticeFor(end, { focused, minSeconds: 30, name: basename(end.path) });
      if (notice && Notification?.isSupported?.()) new Notification(notice).show();
    }
  });

  app.on('second-instance', () => {
    if (win.isDestroyed()) win = createWindow();
    if (win.isMinimized()) win.restore();
    win.focus();
  });
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) win = createWindow();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  // Electron quits as soon as will-quit returns: a run going on was then cut off as by a kill (left running, found
  // interrupted at the next start, its downloads under way and its last batch lost) instead of paused as the app
  // says. Quitting waits for the runs to pause (their downloads under way finish and are recorded), for QUIT_WAIT_MS
  // at most; a second quit meanwhile quits at once.
  let closing = false;
  app.on('will-quit', (event) => {
    if (closing) return;
    closing = true;
    event.preventDefault();
    unsubscribe();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, QUIT_WAIT_MS)));
    void Promise.race([service.close().catch(() => undefined), late]).then(() => {
      clearTimeout(timer);
      app.exit(0);
    });
  });
}

// Tests and portable setups point the app at their own data folder.
if (process.env.RSDESK_USER_DATA) app.setPath('userData', process.env.RSDESK_USER_DATA);

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  start().catch((error) => {
    console.error('[main] failed to start', error);
    // Said to the person (a damaged or locked database, a full disk…), not only to a console no one sees.
    dialog.showErrorBox('ResourceSync Desktop could not start', error instanceof Error ? error.message : String(error));
    app.exit(1);
  });
}
