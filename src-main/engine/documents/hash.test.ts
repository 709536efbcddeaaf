import { describe, expect, it } from 'vitest';
import { parseHashes } from './hash.ts';

const MD5 = '1e0d5cb8ef6ba40c99b14c0237be735e';
const SHA1 = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';
const SHA256 = '854f61290e2e197a11bc91063afce22e43f8ccc655237050ace766adc68dc784';

describe('parseHashes', () => {
  it('reads md5, sha-1 and sha-256 with their lengths', () => {
    expect(parseHashes(`md5:${MD5} sha-1:${SHA1} sha-256:${SHA256}`)).toEqual({
      hashes: { md5: MD5, 'sha-1': SHA1, 'sha-256': SHA256 },
      problems: [],
      notes: [],
    });
  });

  it('reads algorithm names in capitals as the spec writes them, with a note (not a problem: the digests are used)', () => {
    expect(parseHashes(`MD5:${MD5} Sha-256:${SHA256.toUpperCase()}`)).toEqual({
      hashes: { md5: MD5, 'sha-256': SHA256 },
      problems: [],
      notes: ['"MD5": read as md5, as the spec writes it', '"Sha-256": read as sha-256, as the spec writes it'],
    });
    expect(parseHashes(`SHA-512:${SHA256}${SHA256}`).problems[0]).toMatch(/unknown algorithm "SHA-512"/);
  });

  it('accepts any whitespace between tokens, including newlines, and upper-case hex', () => {
    const { hashes, problems } = parseHashes(`  md5:${MD5.toUpperCase()}\n      sha-256:${SHA256}\t`);
    expect(problems).toEqual([]);
    expect(hashes).toEqual({ md5: MD5, 'sha-256': SHA256 });
  });

  it('reads an algorithm name split across lines as in copies of the spec, and says so', () => {
    const { hashes, problems } = parseHashes(`md5:${MD5}\n      sha-\n256:${SHA256}`);
    expect(hashes).toEqual({ md5: MD5, 'sha-256': SHA256 });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/split by whitespace/);
  });

  it('reports base64 digests, wrong lengths, unknown algorithms, missing algorithm, repeats and empty values', () => {
    expect(parseHashes('sha-256:f40xZX_x_DFGFDgghgdfb6rtSx-iosjyf6735432nklj').problems[0]).toMatch(/not hexadecimal/);
    expect(parseHashes(`md5:${MD5}00`).problems[0]).toMatch(/34 hex digits, expected 32/);
    expect(parseHashes(`sha-512:${SHA256}${SHA256}`).problems[0]).toMatch(/unknown algorithm "sha-512"/);
    expect(parseHashes(MD5).problems[0]).toMatch(/not of the form/);
    expect(parseHashes(`:${MD5}`).problems[0]).toMatch(/not of the form/);
    expect(parseHashes(`md5:${MD5} md5:${MD5}`).problems[0]).toMatch(/more than once/);
    expect(parseHashes('   ').problems).toEqual(['empty hash value']);
    const mixed = parseHashes(`md5:${MD5} sha-256:xyz`);
    expect(mixed.hashes).toEqual({ md5: MD5 });
    expect(mixed.problems).toHaveLength(1);
  });

  it('does not treat object prototype names as algorithms', () => {
    expect(parseHashes('constructor:00').problems[0]).toMatch(/unknown algorithm/);
    expect(parseHashes('__proto__:00').problems[0]).toMatch(/unknown algorithm/);
  });
});
