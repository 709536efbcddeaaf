// The `hash` attribute (core spec §7): a whitespace-separated list of `algorithm:hexdigest` tokens,
// e.g. `md5:1e0d… sha-256:854f…`. Values often span lines in real documents; XML turns those newlines into spaces.
import { HASH_ALGORITHMS, type HashAlgorithm } from './model.ts';

const HEX = /^[0-9a-fA-F]+$/;

function isHashAlgorithm(name: string): name is HashAlgorithm {
  return Object.hasOwn(HASH_ALGORITHMS, name);
}

/**
 * Parsed digests (lower-case hex) by algorithm, a description of every token that could not be used (`problems`),
 * and of what was used though written against the spec's spelling (`notes`: conformance findings, nothing more).
 */
export function parseHashes(s: string): { hashes: Partial<Record<HashAlgorithm, string>>; problems: string[]; notes: string[] } {
  const hashes: Partial<Record<HashAlgorithm, string>> = {};
  const problems: string[] = [];
  const notes: string[] = [];
  const tokens = s.split(/\s+/).filter((t) => t !== '');
  if (tokens.length === 0) problems.push('empty hash value');
  for (let i = 0; i < tokens.length; i++) {
    let token = tokens[i];
    // Copies of the spec wrap `sha-256:…` across lines as `sha-` + newline + `256:…`: read it, but say so.
    if (token.endsWith('-') && !token.includes(':') && i + 1 < tokens.length && /^\d+:/.test(tokens[i + 1])) {
      problems.push(`"${token} ${tokens[i + 1].slice(0, 12)}…": algorithm name split by whitespace`);
      token += tokens[++i];
    }
    const colon = token.indexOf(':');
    if (colon <= 0) {
      problems.push(`"${abbreviate(token)}": not of the form algorithm:hexdigest`);
      continue;
    }
    const written = token.slice(0, colon);
    // "MD5:…", "SHA-256:…": hash names are case-insensitive tokens (as hex digits are). Taken as unknown, each such
    // resource was kept unverified, even with bytes its digest contradicts.
    const algorithm = written.toLowerCase();
    if (algorithm !== written && isHashAlgorithm(algorithm)) notes.push(`"${abbreviate(written)}": read as ${algorithm}, as the spec writes it`);
    const digest = token.slice(colon + 1);
    if (!isHashAlgorithm(algorithm)) {
      problems.push(`"${abbreviate(token)}": unknown algorithm "${abbreviate(written)}" (expected md5, sha-1 or sha-256)`);
      continue;
    }
    const expectedLength = HASH_ALGORITHMS[algorithm];
    if (!HEX.test(digest)) {
      problems.push(`"${abbreviate(token)}": ${algorithm} digest is not hexadecimal`);
      continue;
    }
    if (digest.length !== expectedLength) {
      problems.push(`"${abbreviate(token)}": ${algorithm} digest has ${digest.length} hex digits, expected ${expectedLength}`);
      continue;
    }
    if (hashes[algorithm] !== undefined) {
      problems.push(`${algorithm} given more than once`);
      continue;
    }
    hashes[algorithm] = digest.toLowerCase();
  }
  return { hashes, problems, notes };
}

function abbreviate(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
