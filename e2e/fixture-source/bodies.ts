// Deterministic resource bodies: the same (seed, dataset, id, version) always gives the same bytes, so lists can
// state hashes and lengths without storing bodies, and tests can recompute them.
import { createHash } from 'node:crypto';

export interface Representation {
  body: Buffer;
  type: string;
  md5: string;
  sha256: string;
  /** `md5:… sha-256:…`, as written in `rs:md hash`. */
  hash: string;
}

const WORDS = (
  'resource sync source destination capability list change dump manifest index description baseline ' +
  'incremental audit archive bitstream package notification channel hub topic lastmod length hash ' +
  'mirror memento alternate canonical collection metadata catalogue record object dataset sitemap ' +
  'harvest aggregator repository library museum journal article image map letter photograph volume'
).split(' ');

/** FNV-1a, 32 bit: a small stable hash to seed the generator. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: tiny, fast, good enough for fixture data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function words(random: () => number, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(WORDS[Math.floor(random() * WORDS.length)]);
  return out.join(' ');
}

export const TYPES = ['text/plain', 'application/json', 'text/html'] as const;
export type BodyType = (typeof TYPES)[number];
export const EXTENSIONS: Record<BodyType, string> = { 'text/plain': 'txt', 'application/json': 'json', 'text/html': 'html' };

export interface BodySpec {
  seed: number;
  dataset: string;
  id: number;
  version: number;
  type: BodyType;
  /** Roughly how many words. */
  size: 'small' | 'medium';
}

export function generateBody(spec: BodySpec): Buffer {
  const random = prng(fnv1a(`${spec.seed}:${spec.dataset}:${spec.id}:${spec.version}`));
  const count = spec.size === 'small' ? 8 + Math.floor(random() * 30) : 30 + Math.floor(random() * 250);
  const title = `${spec.dataset} resource ${spec.id} version ${spec.version}`;
  const text = words(random, count);
  switch (spec.type) {
    case 'application/json':
      return Buffer.from(JSON.stringify({ id: spec.id, dataset: spec.dataset, version: spec.version, title, text }) + '\n');
    case 'text/html':
      return Buffer.from(
        `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>\n` +
          `<body><h1>${title}</h1><p>${text}</p></body></html>\n`,
      );
    default:
      return Buffer.from(`${title}\n\n${text}\n`);
  }
}

export function represent(body: Buffer, type: string): Representation {
  const md5 = createHash('md5').update(body).digest('hex');
  const sha256 = createHash('sha256').update(body).digest('hex');
  return { body, type, md5, sha256, hash: `md5:${md5} sha-256:${sha256}` };
}
