import { describe, expect, it } from 'vitest';
import { addressScope, furtherInside } from './address-scope.ts';

describe('addressScope', () => {
  it('tells link-local, loopback and local-network addresses, however written', () => {
    const scope = (url: string) => addressScope(new URL(url).hostname);
    expect(scope('http://169.254.169.254/')).toBe('link-local');
    // Decimal and IPv4-mapped forms: the URL parser writes them as the address they are.
    expect(scope('http://2852039166/')).toBe('link-local');
    expect(scope('http://[::ffff:169.254.169.254]/')).toBe('link-local');
    expect(scope('http://[fe80::1]/')).toBe('link-local');
    expect(scope('http://127.0.0.1:8080/')).toBe('loopback');
    expect(scope('http://0x7f.1/')).toBe('loopback');
    expect(scope('http://localhost/')).toBe('loopback');
    expect(scope('http://[::1]/')).toBe('loopback');
    expect(scope('http://192.168.1.10/')).toBe('private');
    expect(scope('http://10.0.0.1/')).toBe('private');
    expect(scope('http://[fd00::1]/')).toBe('private');
    expect(scope('http://93.184.216.34/')).toBe('public');
    expect(scope('http://example.org/')).toBe('public');
  });

  it('allows what reaches no further inside than the Source', () => {
    const u = (s: string) => new URL(s);
    expect(furtherInside(u('http://example.org/'), u('http://cdn.example.net/'))).toBeNull();
    expect(furtherInside(u('http://127.0.0.1:1/'), u('http://localhost:2/'))).toBeNull();
    expect(furtherInside(u('http://192.168.1.2/'), u('http://10.1.1.1/'))).toBeNull();
    expect(furtherInside(u('http://example.org/'), u('http://127.0.0.1/'))).toBe('127.0.0.1 is this computer, which a Source at example.org may not send requests to');
    expect(furtherInside(u('http://example.org/'), u('http://192.168.0.1/'))).toBe('192.168.0.1 is a local network address, which a Source at example.org may not send requests to');
    expect(furtherInside(u('http://localhost:8080/'), u('http://169.254.169.254/'))).toMatch(/^169\.254\.169\.254 is a link-local address/);
  });
});
