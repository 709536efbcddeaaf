// An entry written back as XML from its parsed form, for when its place in the raw document is not at hand.
import type { Entry } from '../../src-main/engine/documents/model.ts';

function escape(value: string): string {
  return value.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

function attributes(record: object): string {
  return Object.entries(record)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escape(String(v))}"`)
    .join('');
}

export function entryXml(entry: Entry, element: 'url' | 'sitemap'): string {
  const lines = [`<${element}>`, `  <loc>${escape(entry.loc)}</loc>`];
  if (entry.lastmod !== undefined) lines.push(`  <lastmod>${escape(entry.lastmod)}</lastmod>`);
  if (entry.changefreq !== undefined) lines.push(`  <changefreq>${escape(entry.changefreq)}</changefreq>`);
  if (Object.values(entry.md).some((v) => v !== undefined)) lines.push(`  <rs:md${attributes(entry.md)}/>`);
  for (const link of entry.links) lines.push(`  <rs:ln${attributes(link)}/>`);
  lines.push(`</${element}>`);
  return lines.join('\n');
}
