// The Resource Dump benchmark's Source: the 1 GiB package of bench/dump.ts (492 bitstreams, half deflated text,
// half stored binary, md5 and length of each in its manifest; generated once under .bench-data/dump/) served by
// nginx with a Capability List and a Resource Dump that gives the package's length and md5. The manifest names
// its resources on http://example.com/, so the mirror is told to allow that host (--allow-host).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDump } from '../dump.ts';
import { WWW } from './data.ts';

export const DUMP_HOST = 'example.com';

export interface DumpSet {
  capabilityListUrl: string;
  packageUrl: string;
  packageBytes: number;
  entries: number;
  /** Bytes of all bitstreams (what is extracted). */
  bitstreamBytes: number;
}

async function md5Of(path: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Generates the package if needed (once) and links it into nginx's root. Before nginx starts. */
export async function prepareDump(): Promise<{ path: string; bytes: number; entries: number; md5: string }> {
  const dump = await ensureDump();
  const dir = join(WWW, 'dump');
  mkdirSync(dir, { recursive: true });
  const link = join(dir, 'resourcedump-1g.zip');
  rmSync(link, { force: true });
  symlinkSync(dump.path, link);
  const stamp = join(dir, 'package.json');
  let md5: string;
  const saved = existsSync(stamp) ? (JSON.parse(readFileSync(stamp, 'utf8')) as { bytes: number; md5: string }) : null;
  if (saved && saved.bytes === dump.bytes) md5 = saved.md5;
  else {
    md5 = await md5Of(dump.path);
    writeFileSync(stamp, JSON.stringify({ bytes: dump.bytes, md5 }));
  }
  return { ...dump, md5 };
}

/** The Capability List and Resource Dump for this run's base URL. */
export function writeDumpDocuments(base: string, dump: { bytes: number; entries: number; md5: string }): DumpSet {
  const ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';
  const dir = join(WWW, 'dump');
  writeFileSync(
    join(dir, 'capabilitylist.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${ns}>\n<rs:md capability="capabilitylist"/>\n` +
      `<url><loc>${base}/dump/resourcedump.xml</loc><rs:md capability="resourcedump"/></url>\n</urlset>\n`,
  );
  writeFileSync(
    join(dir, 'resourcedump.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>\n<urlset ${ns}>\n<rs:ln rel="up" href="${base}/dump/capabilitylist.xml"/>\n` +
      `<rs:md capability="resourcedump" at="2024-01-02T00:00:00Z"/>\n` +
      `<url><loc>${base}/dump/resourcedump-1g.zip</loc><rs:md type="application/zip" length="${dump.bytes}" hash="md5:${dump.md5}" at="2024-01-02T00:00:00Z"/></url>\n</urlset>\n`,
  );
  return {
    capabilityListUrl: `${base}/dump/capabilitylist.xml`,
    packageUrl: `${base}/dump/resourcedump-1g.zip`,
    packageBytes: dump.bytes,
    entries: dump.entries,
    bitstreamBytes: 1024 * 1024 * 1024,
  };
}
