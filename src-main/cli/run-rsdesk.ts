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

/**
 * `rsdesk args…` as a live process (after `command`, such as `nohup`, when given): its output so far, its exit code
 * when it ends, and a signal sent when a test says.
 */
export function startRsdesk(args: string[], options: { command?: string[] } = {}) {
  const [command, ...before] = [...(options.command ?? []), process.execPath];
  const child = spawn(command!, [...before, RSDESK_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (out.stderr += c));
  const ended = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
  return { child, out, ended };
}

/** Waits until `what` holds, checking every 20 ms; throws after `ms`. */
export async function waitUntil(what: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error('waited too long');
    await new Promise((r) => setTimeout(r, 20));
  }
}
