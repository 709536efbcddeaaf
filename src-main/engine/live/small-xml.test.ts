// The pings' XML tree against bodies made to cost time: anyone may POST a ping, and it is parsed on the thread that
// serves the callback server (in the app, its main process).
import { describe, expect, it } from 'vitest';
import { parseSmallXml } from './small-xml.ts';

function tagOf(bytes: number, attribute: (i: number) => string): string {
  const parts: string[] = ['<methodCall '];
  let length = parts[0]!.length;
  for (let i = 0; length < bytes; i++) {
    const a = `${attribute(i)} `;
    parts.push(a);
    length += a.length;
  }
  parts.push('/>');
  return parts.join('');
}

describe('parseSmallXml', () => {
  it('stops at the first thing that is not well-formed, instead of reporting each of a million to itself', () => {
    // 4 MiB of attributes with undeclared prefixes: before, saxes built an error for every one of them (~9 s of
    // one core here), though only the first was ever said.
    const text = tagOf(4 * 1024 * 1024, (i) => `q${i}:a="x"`);
    const started = performance.now();
    expect(() => parseSmallXml(text)).toThrow(/^not well-formed XML \(.*unbound namespace prefix: "q0"/);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('refuses an element with more attributes than a ping has any use for', () => {
    expect(() => parseSmallXml(tagOf(64 * 1024, (i) => `a${i}="x"`))).toThrow(/^an element with more than 100 attributes$/);
    expect(parseSmallXml(tagOf(100, (i) => `a${i}="x"`)).name).toBe('methodCall');
  });
});
