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
