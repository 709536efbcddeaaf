// A loopback Source for the mirroring benchmarks: Debian's nginx (package nginx-light) run as our own process with a
// generated configuration in a temporary folder, listening on 127.0.0.1 at a free port, serving one folder. nginx
// serves small files several times faster than any client here, so it is never what is measured.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const NGINX = process.env.NGINX ?? '/usr/sbin/nginx';

export interface LoopbackSource {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  port: number;
  /** Requests served so far (lines of the access log). */
  requests(): number;
  /** CPU seconds nginx's processes have used so far (Linux; 0 elsewhere): the server shares the machine's cores. */
  cpuSeconds(): number;
  stop(): void;
}

export function nginxMissing(): string | null {
  return existsSync(NGINX) ? null : `${NGINX} not found (Debian: apt-get install nginx-light; or set NGINX)`;
}

/** A port that was free a moment ago (nginx cannot listen on 0 and tell us which port it got). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function config(dir: string, root: string, port: number): string {
  return `daemon on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  types { application/xml xml; application/zip zip; }
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    location / { }
  }
}
`;
}

/** utime + stime of `pid` and its children, in seconds (USER_HZ is 100 on Linux); 0 where there is no /proc. */
function processTreeCpu(pid: number): number {
  let ticks = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue;
      }
      // Fields after the command's closing parenthesis: ppid is the 2nd, utime and stime the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(entry) === pid || Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
    }
  } catch {
    return 0;
  }
  return ticks / 100;
}

/** Starts nginx serving `root`; retries on another port if the chosen one was taken meanwhile. */
export async function startNginx(root: string): Promise<LoopbackSource> {
  const missing = nginxMissing();
  if (missing) throw new Error(missing);
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'rsdesk-bench-nginx-'));
    const port = await freePort();
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, config(dir, root, port));
    try {
      execFileSync(NGINX, ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    } catch (error) {
      lastError = error;
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const pidFile = join(dir, 'nginx.pid');
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 20));
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    let stopped = false;
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      requests: () => {
        try {
          const log = readFileSync(join(dir, 'access.log'));
          let n = 0;
          for (const byte of log) if (byte === 10) n++;
          return n;
        } catch {
          return 0;
        }
      },
      cpuSeconds: () => processTreeCpu(pid),
      stop: () => {
        if (stopped) return;
        stopped = true;
        try {
          // The master process we started (its pid file); it stops its worker.
          process.kill(pid, 'SIGQUIT');
        } catch {
          // Already gone.
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  throw new Error(`nginx did not start: ${(lastError as Error)?.message ?? lastError}`);
}
