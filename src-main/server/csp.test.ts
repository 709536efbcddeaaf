// The built renderer's meta tag and the HTTP header carry one policy (src-main/server/csp.ts).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CSP, HEADER_ONLY_DIRECTIVES, META_CSP, parseCsp } from './csp.ts';

const RENDERER = fileURLToPath(new URL('../../out/renderer/', import.meta.url));
const INDEX = join(RENDERER, 'index.html');

function built(): string {
  expect(existsSync(INDEX), `${INDEX} is missing: npm test builds it first`).toBe(true);
  return readFileSync(INDEX, 'utf8');
}

describe('Content-Security-Policy', () => {
  it('refuses plugins, <base> and form posts, and framing (header)', () => {
    const header = parseCsp(CSP);
    expect(header.get('object-src')).toBe("'none'");
    expect(header.get('base-uri')).toBe("'none'");
    expect(header.get('form-action')).toBe("'none'");
    expect(header.get('frame-ancestors')).toBe("'none'");
    expect(header.get('script-src')).toBe("'self'");
  });

  it('the built index.html carries the header’s policy, but for what a meta tag cannot carry', () => {
    const metas = [...built().matchAll(/<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"/gi)];
    expect(metas).toHaveLength(1);
    const meta = metas[0]![1]!;
    expect(meta).toBe(META_CSP);
    const expected = parseCsp(CSP);
    for (const name of HEADER_ONLY_DIRECTIVES) expected.delete(name);
    expect(parseCsp(meta)).toEqual(expected);
    expect(HEADER_ONLY_DIRECTIVES).toEqual(['frame-ancestors']);
  });

  it('the built index.html links a favicon that was bundled (no 404 on every load)', () => {
    const icon = /<link\s+rel="icon"[^>]*href="([^"]+)"/.exec(built());
    expect(icon).not.toBeNull();
    const href = icon![1]!;
    expect(href.startsWith('data:') || existsSync(join(dirname(INDEX), href))).toBe(true);
  });
});
