// Reads a response body chunk by chunk through events. `for await` over a stream, the obvious way, builds an async
// iterator, an end-of-stream watcher and a promise per chunk: for a body of one 2 KiB chunk that is most of what the
// main thread spends on it. Same outcomes: resolves at the end, rejects with the stream's error, with an error of
// its own when the stream closes before its end, or with what `onChunk` threw (the stream is then destroyed).
import type { Readable } from 'node:stream';

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * Calls `onChunk` with each chunk in order. When it returns a promise, the stream is paused until that settles
 * (backpressure); a rejection ends the reading with that error.
 */
export function eachChunk(body: Readable, onChunk: (chunk: Buffer) => Promise<void> | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (body.errored) return reject(body.errored);
    if (body.readableEnded) return resolve();
    if (body.destroyed) return reject(prematureClose());
    let settled = false;
    const finish = (err: unknown, destroy = false) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      if (destroy) body.destroy();
      if (err === undefined) resolve();
      else reject(err);
    };
    const onData = (chunk: Buffer) => {
      let wait: Promise<void> | undefined;
      try {
        wait = onChunk(chunk);
      } catch (err) {
        finish(err, true);
        return;
      }
      if (wait === undefined) return;
      body.pause();
      wait.then(
        () => {
          if (!settled) body.resume();
        },
        (err: unknown) => finish(err, true),
      );
    };
    const onEnd = () => finish(undefined);
    const onError = (err: unknown) => finish(err);
    // Closed without its end and without an error (destroyed): cut off.
    const onClose = () => finish(body.errored ?? prematureClose());
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}
