// The per-origin sign-ins in the secret store: read back after a restart (a new instance on the same file), listed
// without secrets, damaged or foreign values taken as absent, nothing in clear where a keychain seals.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { FileSecretStore } from '../engine/mirror/secrets.ts';
import type { SecretBox } from '../store/secrets.ts';
import { signInKey, SourceSignIns } from './source-sign-ins.ts';

const box: SecretBox = {
  seal: (plain) => `sealed:${Buffer.from(plain).reverse().toString('base64')}`,
  open: (sealed) => Buffer.from(sealed.slice(7), 'base64').reverse().toString(),
};
let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rsdesk-sign-ins-'));
  file = join(dir, 'mirror-secrets.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('keeps sign-ins per origin, sealed, lists them without secrets, and forgets them', () => {
  const a = 'https://a.example';
  const b = 'http://127.0.0.1:8080';
  const signIns = new SourceSignIns(new FileSecretStore(file, box));
  signIns.set(a, { scheme: 'basic', user: 'ann', password: 'pw-one' });
  signIns.set(b, { scheme: 'bearer', token: 'tok-two' });
  signIns.set(a, { scheme: 'basic', user: 'ann', password: 'pw-three' });
  const text = readFileSync(file, 'utf8');
  for (const secret of ['pw-one', 'pw-three', 'tok-two', 'ann']) expect(text).not.toContain(secret);

  // A restart: a new instance on the same file.
  const again = new SourceSignIns(new FileSecretStore(file, box));
  expect(again.list()).toEqual([
    { origin: a, scheme: 'basic', user: 'ann' },
    { origin: b, scheme: 'bearer' },
  ]);
  expect(again.authorizationFor(a)).toBe(`Basic ${Buffer.from('ann:pw-three').toString('base64')}`);
  expect(again.authorizationFor(b)).toBe('Bearer tok-two');
  expect(again.authorizationFor('https://other.example')).toBeNull();
  again.delete(a);
  expect(new SourceSignIns(new FileSecretStore(file, box)).list()).toEqual([{ origin: b, scheme: 'bearer' }]);
});

it('takes a damaged value, or one this computer cannot open, as no sign-in', () => {
  const origin = 'https://a.example';
  new SourceSignIns(new FileSecretStore(file, box)).set(origin, { scheme: 'bearer', token: 't' });
  // Without the keychain that sealed it: absent.
  expect(new SourceSignIns(new FileSecretStore(file)).get(origin)).toBeNull();
  // Written by something else: absent, and the list skips it.
  const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  all[signInKey(origin)] = { sealed: false, value: '{"scheme":"bearer"}' };
  writeFileSync(file, JSON.stringify(all));
  const signIns = new SourceSignIns(new FileSecretStore(file, box));
  expect(signIns.get(origin)).toBeNull();
  expect(signIns.list()).toEqual([]);
  // No store at all: nothing kept, and setting says so.
  const none = new SourceSignIns(undefined);
  expect(none.available).toBe(false);
  expect(none.get(origin)).toBeNull();
  expect(() => none.set(origin, { scheme: 'bearer', token: 't' })).toThrow();
});
