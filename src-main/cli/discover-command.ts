// rsdesk discover <url>: runs discovery and prints the DiscoveryResult.
import { InvalidArgumentsError } from '../app/errors.ts';
import { normalizeStartUrl } from '../app/start-url.ts';
import { discover } from '../engine/discovery/discover.ts';
import { bearerFor, Http } from '../engine/http/index.ts';
import { formatDiscovery } from './format.ts';
import type { Io } from './io.ts';
import { UsageError } from './usage.ts';

export interface DiscoverOptions {
  url: string;
  json: boolean;
  token?: string;
  timeoutMs?: number;
  userAgent: string;
}

export async function discoverCommand(options: DiscoverOptions, io: Io): Promise<number> {
  let start: string;
  try {
    start = normalizeStartUrl(options.url, 'with --token (a bearer token)');
  } catch (error) {
    if (error instanceof InvalidArgumentsError) throw new UsageError(error.message);
    throw error;
  }
  const http = new Http({ sourceHeaders: bearerFor(start, options.token), timeoutMs: options.timeoutMs, userAgent: options.userAgent });
  try {
    const result = await discover(start, { http });
    io.out(options.json ? `${JSON.stringify(result, null, 2)}\n` : formatDiscovery(result));
    const found = result.sourceDescription !== null || result.capabilityLists.length > 0;
    const errors = result.findings.some((f) => f.severity === 'error');
    return found && !errors ? 0 : 1;
  } finally {
    await http.close();
  }
}
