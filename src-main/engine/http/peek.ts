// Look at the first bytes of a stream (to tell XML from HTML, or spot gzip) without losing them.

export interface Peeked {
  /** At least `bytes` bytes (fewer only when the stream is shorter), as received. */
  head: Uint8Array;
  /** The whole stream again, from its first byte. */
  stream: AsyncIterable<Uint8Array>;
}

export async function peek(source: AsyncIterable<Uint8Array>, bytes: number): Promise<Peeked> {
  const iterator = source[Symbol.asyncIterator]();
  const buffered: Uint8Array[] = [];
  let size = 0;
  let done = false;
  while (size < bytes) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    buffered.push(next.value);
    size += next.value.byteLength;
  }
  const head = Buffer.concat(buffered);
  async function* replay(): AsyncGenerator<Uint8Array> {
    try {
      for (const chunk of buffered) yield chunk;
      if (done) return;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      // Stopping early must release the underlying stream (and its socket).
      if (!done) await iterator.return?.();
    }
  }
  return { head, stream: replay() };
}
