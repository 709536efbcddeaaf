// Starts the real app server (`rsdesk serve`) as a child process, the way a person runs it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface AppServer {
  /** http://127.0.0.1:PORT/#token=… as printed by rsdesk. */
  url: string;
  origin: string;
  stop(): Promise<void>;
}

const READY = /ResourceSync Desktop at (http:\/\/127\.0\.0\.1:\d+)\/#token=[0-9A-Za-z]+/;

/**
 * `root`: the project folder (bin/rsdesk.mjs, out/renderer). `port`: 0 (default) for a free one; a fixed port keeps
 * the page's origin, and so its localStorage, across restarts.
 */
export async function startAppServer(root: string, dataDir: string, timeoutMs = 30_000, port = 0): Promise<AppServer> {
  if (!existsSync(join(root, 'out/renderer/index.html'))) {
    throw new Error('out/renderer is missing: run `npm run build` before the end-to-end tests');
  }
  // The callback server of live notifications on any free port: parallel runs never collide on the default one.
  const child = spawn(process.execPath, [join(root, 'bin/rsdesk.mjs'), 'serve', '--port', String(port), '--live-port', '0', '--data-dir', dataDir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rsdesk serve did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = READY.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`rsdesk serve exited with ${code} before it was ready:\n${output}`));
    });
  });

  return {
    url: match[0].slice('ResourceSync Desktop at '.length),
    origin: match[1],
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
