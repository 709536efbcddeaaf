import { describe, expect, it } from 'vitest';
import { authorizationOf, mergeSettings, parseBasic, parseHeader, parseHeaders, resolveCredentials } from './settings.ts';
import { MemorySecretStore } from './secrets.ts';

describe('settings', () => {
  it('parses headers as people write them and refuses the transport’s own', () => {
    expect(parseHeader('X-Api-Key:  abc ')).toEqual(['x-api-key', 'abc']);
    expect(parseHeader('From: a@b.org')).toEqual(['from', 'a@b.org']);
    expect(() => parseHeader('no colon')).toThrow(/Name: value/);
    expect(() => parseHeader('Authorization: Bearer x')).toThrow(/use --token or --basic/);
    expect(() => parseHeader('Host: elsewhere')).toThrow(/host header cannot be set/);
    expect(() => parseHeader('bad name: x')).toThrow(/Name: value/);
    // The app's rules (contract/headers.ts): every hop-by-hop header, and no control character in a value but a tab.
    expect(() => parseHeader('Trailer: x')).toThrow(/trailer header cannot be set/);
    expect(() => parseHeader('Proxy-Connection: keep-alive')).toThrow(/proxy-connection header cannot be set/);
    expect(() => parseHeader('Content-Length: 3')).toThrow(/content-length header cannot be set/);
    expect(() => parseHeader('X-A: a\u0001b')).toThrow(/line break or another control character/);
    expect(parseHeader('X-A: a\tb')).toEqual(['x-a', 'a\tb']);
    // What the mirror asks for itself, request by request: one for every request broke every resource.
    for (const name of ['Range', 'If-None-Match', 'If-Modified-Since', 'Accept-Encoding', 'Expect']) {
      expect(() => parseHeader(`${name}: x`)).toThrow(`The ${name.toLowerCase()} header cannot be set: the mirror sets it itself, request by request`);
    }
    // Latin-1 travels in a header; another script or a curly quote cannot, and would have failed every request.
    expect(parseHeader('X-Name: café')).toEqual(['x-name', 'café']);
    expect(() => parseHeader('X-Name: 日本語')).toThrow('The value of the x-name header contains a character that cannot be sent in a header');
    expect(() => parseHeader('X-Key: “abc”')).toThrow(/x-key header contains a character that cannot be sent/);
  });

  it('takes each --header once, as many and as long as the Access tab takes', () => {
    expect(parseHeaders(['X-A: 1', 'From: a@b.org'])).toEqual({ 'x-a': '1', from: 'a@b.org' });
    // A second one silently replaced the first.
    expect(() => parseHeaders(['X-A: 1', 'x-a: 2'])).toThrow('The x-a header is given twice: give each header once');
    expect(() => parseHeaders(Array.from({ length: 33 }, (_, i) => `X-${i}: v`))).toThrow('At most 32 extra headers can be given');
    expect(() => parseHeaders([`X-Long: ${'v'.repeat(8193)}`])).toThrow('The value of the x-long header is too long (at most 8,192 characters)');
    expect(() => parseHeaders([`X-${'n'.repeat(300)}: v`])).toThrow('A header name is too long (at most 256 characters)');
  });

  it('parses USER:PASSWORD (colons allowed in the password) into a Basic header', () => {
    const c = parseBasic('me:pa:ss');
    expect(c).toEqual({ scheme: 'basic', user: 'me', password: 'pa:ss' });
    expect(authorizationOf(c)).toBe(`Basic ${Buffer.from('me:pa:ss').toString('base64')}`);
    expect(authorizationOf({ scheme: 'bearer', token: 't' })).toBe('Bearer t');
    expect(() => parseBasic(':x')).toThrow(/USER:PASSWORD/);
    expect(() => parseBasic('nocolon')).toThrow(/USER:PASSWORD/);
  });

  it('merges changes over the kept settings and keeps the secret out of them', () => {
    const first = mergeSettings(undefined, 'http://a', { concurrency: 2, headers: { x: '1' } }, { scheme: 'bearer', token: 'T' });
    expect(first).toEqual({ origin: 'http://a', auth: { scheme: 'bearer' }, headers: { x: '1' }, concurrency: 2, delayMs: null, timeoutMs: null, proxy: 'env' });
    expect(JSON.stringify(first)).not.toContain('"T"');
    const second = mergeSettings(first, 'http://a', { delayMs: 10, concurrency: undefined });
    expect(second).toMatchObject({ concurrency: 2, delayMs: 10, auth: { scheme: 'bearer' } });
    expect(mergeSettings(second, 'http://a', {}, null).auth).toBeNull();
    const store = new MemorySecretStore();
    expect(resolveCredentials(first, 'id1', { scheme: 'bearer', token: 'T' }, store)).toEqual({ scheme: 'bearer', token: 'T' });
    expect(resolveCredentials(first, 'id1', undefined, store)).toEqual({ scheme: 'bearer', token: 'T' });
    expect(() => resolveCredentials(first, 'id2', undefined, store)).toThrow(/none is kept on this computer/);
  });
});
