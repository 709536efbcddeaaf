// When a hub fails: wait longer after each failure (1 s, 2 s, 4 s … at most an hour), or what its Retry-After says.
export function backoffMs(attempts: number, baseMs: number, retryAfterMs: number | null = null, maxMs = 3_600_000): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempts - 1));
  return retryAfterMs !== null ? Math.min(maxMs, Math.max(exp, retryAfterMs)) : exp;
}

/** setTimeout caps delays at 2^31-1 ms (~24.8 days); longer waits are taken in steps by the caller's re-check. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
