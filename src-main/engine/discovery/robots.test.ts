import { describe, expect, it } from 'vitest';
import { sitemapsInRobots } from './robots.ts';

describe('sitemapsInRobots', () => {
  it('reads Sitemap lines in any case, skipping comments, junk and duplicates', () => {
    const text =
      'User-agent: *\r\nDisallow: /cgi-bin/\r\n# Sitemap: http://127.0.0.1/commented.xml\r\n' +
      'Sitemap: http://127.0.0.1/dataset1/resourcelist.xml\r\n' +
      'SITEMAP:http://127.0.0.1/sitemap.xml # the plain one\n' +
      '  sitemap :  /relative.xml\n' +
      'Sitemap: http://127.0.0.1/dataset1/resourcelist.xml\n' +
      'Sitemap:\nNotsitemap: http://127.0.0.1/no.xml\n';
    expect(sitemapsInRobots(text, 'http://127.0.0.1:8080/robots.txt')).toEqual([
      'http://127.0.0.1/dataset1/resourcelist.xml',
      'http://127.0.0.1/sitemap.xml',
      'http://127.0.0.1:8080/relative.xml',
    ]);
  });
});

describe('sitemapsInRobots against a robots.txt that floods', () => {
  it('reads 512 KiB of distinct Sitemap: lines (about 30,000) quickly, in order', () => {
    let text = '';
    for (let i = 0; text.length < 512 * 1024; i++) text += `Sitemap: /s${i}\n`;
    const started = Date.now();
    const urls = sitemapsInRobots(text, 'http://127.0.0.1/robots.txt');
    expect(urls.length).toBeGreaterThan(30_000);
    expect(urls[2]).toBe('http://127.0.0.1/s2');
    // Comparing each URL with all before it took about 2 s.
    expect(Date.now() - started).toBeLessThan(500);
  });
});
