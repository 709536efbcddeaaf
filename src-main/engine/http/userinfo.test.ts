// A user name and password a person wrote into a URL are never quoted back, also when the URL is refused as invalid.
import { describe, expect, it } from 'vitest';
import { normalizeStartUrl } from '../discovery/start-url.ts';
import { parseHttpUrl } from './client.ts';
import { parseProxySetting } from './dispatcher.ts';
import { hideUserinfo, splitUserinfo } from './userinfo.ts';

const PASSWORD = 'S3CRET-4711';

function refusal(fn: () => unknown): { message: string; url: string } {
  try {
    fn();
  } catch (err) {
    return err as { message: string; url: string };
  }
  throw new Error('not refused');
}

describe('a user name and password in a URL', () => {
  it('are taken out of a valid URL, and of one that is not', () => {
    expect(splitUserinfo(`https://me:${PASSWORD}@example.org/x`)).toEqual({ url: 'https://example.org/x', user: 'me', password: PASSWORD });
    expect(hideUserinfo(`ftp://me:${PASSWORD}@example.org/x`)).toBe('ftp://example.org/x');
    expect(hideUserinfo(`http://me:${PASSWORD}@127.0.0.1:99999/x`)).toBe('http://…@127.0.0.1:99999/x');
    expect(hideUserinfo(`http://me:pa/${PASSWORD}@127.0.0.1/x`)).toBe('http://…@127.0.0.1/x');
    expect(hideUserinfo(`//me:${PASSWORD}@exa mple.org/`)).toBe('//…@exa mple.org/');
    expect(hideUserinfo('mailto:a@example.org')).toBe('mailto:a@example.org');
    expect(hideUserinfo('https://example.org/a b')).toBe('https://example.org/a b');
    expect(hideUserinfo('not a url')).toBe('not a url');
  });

  it('are not quoted when the URL is refused, whichever rule refuses it', () => {
    for (const input of [`http://me:${PASSWORD}@127.0.0.1:99999/x`, `ftp://me:${PASSWORD}@127.0.0.1/x`, `https://me:${PASSWORD}@exa mple.org/`]) {
      const start = refusal(() => normalizeStartUrl(input));
      expect(start.message).toMatch(/^Not an http\(s\) URL or host name: /);
      expect(start.message + start.url).not.toContain(PASSWORD);
    }
    for (const input of [`http://me:${PASSWORD}@127.0.0.1:99999/x`, `ftp://me:${PASSWORD}@127.0.0.1/x`]) {
      const fetched = refusal(() => parseHttpUrl(input));
      expect(fetched.message).toMatch(/^(Not a valid URL|Only http and https URLs can be fetched)/);
      expect(fetched.message + fetched.url).not.toContain(PASSWORD);
    }
    const proxy = refusal(() => parseProxySetting(`http://pu:${PASSWORD}@proxy.invalid:99999`));
    expect(proxy.message).toBe('The proxy must be env, none or an http(s) URL, not http://…@proxy.invalid:99999');
    expect(proxy.url).not.toContain(PASSWORD);
  });
});
