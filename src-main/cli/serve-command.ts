// rsdesk serve: the app in a browser, served on 127.0.0.1 with a per-start token.
import { existsSync } from 'node:fs';
import { makeFolders } from '../engine/mirror/make-folders.ts';
import { join } from 'node:path';
import { createService } from '../app/service.ts';
import { FileSecretStore } from '../engine/mirror/secrets.ts';
import { startHttpAdapter } from '../server/http-adapter.ts';
import { openStore } from '../store/store.ts';
import type { Io } from './io.ts';
import { firstStopSignal, SIGNAL_EXIT } from './exit-codes.ts';

export interface ServeOptions {
  port?: number;
  /** The callback server's port for this run (default: the saved setting). */
  livePort?: number;
  dataDir: string;
  rendererDir: string;
  version: string;
  /** Resolves when the server should stop (with the signal's name, if one stopped it); default: SIGINT, SIGTERM or SIGHUP. */
  stopped?: Promise<unknown>;
}

export async function serveCommand(options: ServeOptions, io: Io): Promise<number> {
  if (!existsSync(join(options.rendererDir, 'index.html'))) {
    io.err(`rsdesk: the user interface is not built (${join(options.rendererDir, 'index.html')} is missing): run npm run build first\n`);
    return 1;
  }
  makeFolders(options.dataDir);
  const store = openStore(join(options.dataDir, 'rsdesk.sqlite'));
  // Mirrors' credentials: a file beside the database, in clear with mode 600 (no keychain outside the desktop app).
  const mirrorSecrets = new FileSecretStore(join(options.dataDir, 'mirror-secrets.json'));
  const service = createService({ store, adapter: 'http', version: options.version, live: { dataDir: options.dataDir, port: options.livePort }, mirrorSecrets });
  let adapter;
  try {
    adapter = await startHttpAdapter({
      dispatch: service.dispatch,
      events: service.events,
      rendererDir: options.rendererDir,
      port: options.port,
    });
  } catch (error) {
    await service.close();
    const reason = error instanceof Error ? error.message : String(error);
    io.err(`rsdesk: cannot listen on 127.0.0.1${options.port ? `:${options.port}` : ''}: ${reason}\n`);
    return 1;
  }
  await service.startLive();
  const stopped = options.stopped ?? firstStopSignal();
  io.out(`ResourceSync Desktop at ${adapter.url}\n`);
  const by = await stopped;
  await adapter.close();
  await service.close();
  return by === 'SIGHUP' ? SIGNAL_EXIT.SIGHUP : 0;
}
