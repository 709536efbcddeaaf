// A body that trickles in: a Source that sends a byte just before every idle timeout would hold a connection until
// the overall deadline (10 min for a resource, hours for a large dump package). Once the headers are in, a body must
// bring at least SLOWEST_BODY_BYTES_PER_SECOND on average over each window; the window is twice the idle timeout, so
// a body that falls silent is reported as timed out, which it is.
import { formatDuration } from '../http/errors.ts';

export const SLOWEST_BODY_BYTES_PER_SECOND = 1024;

export function slowBodyWindow(timeoutMs: number): number {
  return 2 * timeoutMs;
}

export class SlowBody {
  /** Bytes so far; the caller adds to it as they arrive. */
  bytes = 0;
  readonly #windowMs: number;
  readonly #least: number;
  #checkAt: number;
  #checkedBytes = 0;

  constructor(windowMs: number, now = Date.now()) {
    this.#windowMs = windowMs;
    this.#least = Math.ceil((SLOWEST_BODY_BYTES_PER_SECOND * windowMs) / 1000);
    this.#checkAt = now + windowMs;
  }

  /** Why the body is too slow when a window ended short of the floor; null otherwise. Cheap: call it often. */
  check(now: number): string | null {
    if (now < this.#checkAt) return null;
    const got = this.bytes - this.#checkedBytes;
    if (got < this.#least) {
      return `arrived too slowly: ${got.toLocaleString('en')} bytes in ${formatDuration(this.#windowMs)}, when at least ${this.#least.toLocaleString('en')} were expected (${this.bytes.toLocaleString('en')} bytes in all); stopped`;
    }
    this.#checkAt = now + this.#windowMs;
    this.#checkedBytes = this.bytes;
    return null;
  }
}
