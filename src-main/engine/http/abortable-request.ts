// A request through an undici dispatcher that fails as soon as its signal aborts, even while it waits for a connection.
import type { Dispatcher } from 'undici';

/**
 * The agent's request, failing as soon as `signal` aborts. undici keeps an aborted request that waits for a free
 * connection in its queue and fails it only when a connection frees (it is not sent then): with every connection held
 * by a Source that stalls, a cancelled run waited for them, up to their timeout. The callback form in a promise of our
 * own: no more promises per request than undici's promise form makes, and one listener (~0.3 µs added and removed).
 * (The engine's dispatchers keep such a request out of undici's queue too: origin-gate.ts.)
 */
export function abortableRequest(agent: Dispatcher, options: Dispatcher.RequestOptions & { signal: AbortSignal }): Promise<Dispatcher.ResponseData> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const aborted = () => reject(signal.reason);
    signal.addEventListener('abort', aborted);
    agent.request(options, (err, data) => {
      signal.removeEventListener('abort', aborted);
      if (err) reject(err);
      else resolve(data);
    });
  });
}
