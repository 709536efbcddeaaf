// rsdesk as a real process against a Source that trickles every response one byte at a time (each byte well within
// the idle timeout): inspect and discover must end on their own, in bounded time, saying what ran out of time.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileServer, trickle, type HostileServer } from '../engine/http/hostile-servers.ts';
import { runRsdesk } from './run-rsdesk.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
async function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const result = await runRsdesk(args, { cwd: ROOT, command: ['npx', 'node'] });
  return { ...result, ms: Date.now() - started };
}

let server: HostileServer;
beforeAll(async () => {
  server = await hostileServer(trickle(200));
});
afterAll(async () => {
  await server.close();
});

describe('rsdesk against a trickling Source', { timeout: 60_000 }, () => {
  it('inspect and discover end within their deadlines (10 × a 1 s timeout) and name the URL', async () => {
    const [inspect, discover] = await Promise.all([
      run(['inspect', `${server.url}/list.xml`, '--timeout', '1', '--json']),
      run(['discover', server.url, '--timeout', '1', '--json']),
    ]);
    // 10 s of deadline, plus starting Node through npx on a busy machine.
    expect(inspect.ms).toBeGreaterThanOrEqual(10_000);
    expect(inspect.ms).toBeLessThan(30_000);
    expect(inspect.code).toBe(1);
    const refused = JSON.parse(inspect.stdout) as { error: { code: string; message: string } };
    expect(refused.error.code).toBe('deadline');
    expect(refused.error.message).toMatch(new RegExp(`^${server.url}/list\\.xml did not finish within 10 s \\(\\d+ bytes had arrived\\)`));

    expect(discover.ms).toBeGreaterThanOrEqual(10_000);
    expect(discover.ms).toBeLessThan(30_000);
    expect(discover.code).toBe(1);
    const found = JSON.parse(discover.stdout) as { findings: { code: string; message: string }[] };
    expect(found.findings.find((f) => f.code === 'discovery-deadline')?.message).toBe(
      `Discovery ran out of time (10 s) while fetching ${server.url}/; what was found until then is shown`,
    );
  });
});
