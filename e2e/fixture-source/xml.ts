// A minimal writer for sitemap / ResourceSync documents, entry by entry, so large documents can be streamed.
import { RS_NAMESPACE, SITEMAP_NAMESPACE } from '../../src-main/engine/documents/model.ts';

export type Attrs = Record<string, string | number | undefined>;

export interface LinkSpec extends Attrs {
  rel: string;
  href: string;
}

export interface EntrySpec {
  loc: string;
  lastmod?: string;
  changefreq?: string;
  md?: Attrs;
  links?: LinkSpec[];
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]};`);
}

function attributes(attrs: Attrs): string {
  let out = '';
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined) continue;
    out += ` ${name}="${escapeXml(String(value))}"`;
  }
  return out;
}

export function rsMd(attrs: Attrs): string {
  return `<rs:md${attributes(attrs)}/>`;
}

export function rsLn(link: LinkSpec): string {
  const { rel, href, ...rest } = link;
  return `<rs:ln${attributes({ rel, href, ...rest })}/>`;
}

export type Root = 'urlset' | 'sitemapindex';

export function documentStart(root: Root, md: Attrs, links: LinkSpec[] = []): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<${root} xmlns="${SITEMAP_NAMESPACE}" xmlns:rs="${RS_NAMESPACE}">\n` +
    links.map((link) => `  ${rsLn(link)}\n`).join('') +
    `  ${rsMd(md)}\n`
  );
}

export function documentEnd(root: Root): string {
  return `</${root}>\n`;
}

export function entry(spec: EntrySpec, root: Root = 'urlset'): string {
  const tag = root === 'urlset' ? 'url' : 'sitemap';
  let out = `  <${tag}>\n    <loc>${escapeXml(spec.loc)}</loc>\n`;
  if (spec.lastmod) out += `    <lastmod>${spec.lastmod}</lastmod>\n`;
  if (spec.changefreq) out += `    <changefreq>${spec.changefreq}</changefreq>\n`;
  if (spec.md && Object.values(spec.md).some((v) => v !== undefined)) out += `    ${rsMd(spec.md)}\n`;
  for (const link of spec.links ?? []) out += `    ${rsLn(link)}\n`;
  return out + `  </${tag}>\n`;
}

/** A whole small document as one string. */
export function document(root: Root, md: Attrs, links: LinkSpec[], entries: EntrySpec[]): string {
  return documentStart(root, md, links) + entries.map((e) => entry(e, root)).join('') + documentEnd(root);
}
