// A ready-made sink: each bitstream into a new temporary file in one folder, removed again when the bitstream turns
// out bad. The mirror's own sink writes through its atomic-write path instead; this one serves tests, the benchmark
// and callers that only want the files.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BitstreamSink } from './extract.ts';

export interface TempFile {
  path: string;
}

export function tempFileSink(dir: string, options: { prefix?: string } = {}): BitstreamSink {
  let n = 0;
  return async (_entry, stream) => {
    const path = join(dir, `${options.prefix ?? 'bitstream'}-${process.pid}-${++n}.tmp`);
    try {
      await pipeline(stream, createWriteStream(path, { highWaterMark: 1 << 20 }));
    } catch (err) {
      await rm(path, { force: true });
      throw err;
    }
    const result: TempFile = { path };
    return result;
  };
}
