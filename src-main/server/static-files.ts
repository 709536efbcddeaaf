// Static files of the built renderer. A request path can only ever name a regular file inside the renderer folder:
// `..` segments (raw or percent-encoded), backslashes, NUL bytes and symlinks that lead outside are all refused.
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, sep } from 'node:path';

export const MIME_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

export type StaticLookup = { kind: 'file'; path: string; size: number } | { kind: 'bad-path' } | { kind: 'not-found' };

/** Splits the raw request path into decoded segments, or null when any segment could step outside. */
export function safeSegments(rawPath: string): string[] | null {
  const segments: string[] = [];
  for (const raw of rawPath.split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (segment === '..' || segment.includes('/') || segment.includes('\\') || segment.includes('\0')) return null;
    if (segment === '' || segment === '.') continue;
    segments.push(segment);
  }
  return segments;
}

/** Finds the file a request path names, inside rootDir (whose real path is rootReal). */
export async function lookupStatic(rootDir: string, rawPath: string): Promise<StaticLookup> {
  const segments = safeSegments(rawPath);
  if (segments === null) return { kind: 'bad-path' };
  if (segments.length === 0) segments.push('index.html');
  try {
    const rootReal = await realpath(rootDir);
    const real = await realpath(join(rootReal, ...segments));
    if (!real.startsWith(rootReal + sep)) return { kind: 'not-found' };
    const info = await stat(real);
    if (!info.isFile()) return { kind: 'not-found' };
    return { kind: 'file', path: real, size: info.size };
  } catch {
    return { kind: 'not-found' };
  }
}

export function sendFile(req: IncomingMessage, res: ServerResponse, file: { path: string; size: number }): void {
  const type = MIME_TYPES[extname(file.path).toLowerCase()] ?? 'application/octet-stream';
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': String(file.size),
    // The renderer's file names carry content hashes except index.html; always revalidating keeps it simple.
    'Cache-Control': 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file.path);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}
