// Test support: `rsdesk` run as people run it, a real process, its output collected. Not used by the CLI itself.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const RSDESK_BIN = fileURLToPath(new URL('../../bin/rsdesk.mjs', import.meta.url));

export interface RsdeskRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `rsdesk args…` with this Node (or `command` before the script, e.g. `npx node`), in `cwd`, with `env` added. */
export function runRsdesk(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; command?: string[] } = {}): Promise<RsdeskRun> {
  const [command, ...before] = options.command ?? [process.execPath];
  return new Promise((resolve, reject) => {
    const child = spawn(command!, [...before, RSDESK_BIN, ...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
