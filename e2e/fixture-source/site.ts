// The Source as a whole: the Source Description and the pages that make it discoverable (HTML link, HTTP Link
// header, robots.txt, the well-known URI).
import { PATHS } from './paths.ts';
import { document, escapeXml } from './xml.ts';

export interface Routes {
  /** `/.well-known/resourcesync` serves the Source Description. */
  wellKnown: boolean;
  /** `/` has `<link rel="resourcesync">` to the dataset1 Capability List. */
  htmlLink: boolean;
  /** `/linked/article.html` answers with `Link: <…dataset2 Capability List>; rel="resourcesync"`. */
  linkHeader: boolean;
  /** `/robots.txt` has `Sitemap:` lines (a plain sitemap and the dataset1 Resource List). */
  robots: boolean;
}

export function sourceDescription(base: string): string {
  return document(
    'urlset',
    { capability: 'description' },
    [{ rel: 'describedby', href: base + PATHS.about, type: 'text/html' }],
    [
      {
        loc: base + PATHS.dataset1.capabilityList,
        md: { capability: 'capabilitylist' },
        links: [{ rel: 'describedby', href: base + PATHS.dataset1.about, type: 'text/html' }],
      },
      {
        loc: base + PATHS.dataset2.capabilityList,
        md: { capability: 'capabilitylist' },
        links: [{ rel: 'describedby', href: base + PATHS.dataset2.about, type: 'text/html' }],
      },
    ],
  );
}

function page(title: string, head: string, body: string): string {
  return (
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${escapeXml(title)}</title>\n` +
    `<link rel="stylesheet" href="/style.css">\n${head}</head>\n<body>\n<h1>${escapeXml(title)}</h1>\n${body}\n</body>\n</html>\n`
  );
}

export function homePage(routes: Routes): string {
  const head = routes.htmlLink ? `<link rel="alternate" type="application/rss+xml" href="/feed.xml">\n<link rel="resourcesync" href="${PATHS.dataset1.capabilityList}">\n` : '';
  return page(
    'Fixture Source',
    head,
    `<p>A generated ResourceSync Source for tests.</p>\n<ul>\n<li><a href="${PATHS.linkHeaderPage}">An article</a></li>\n` +
      `<li><a href="${PATHS.dataset1.about}">dataset1</a></li>\n<li><a href="${PATHS.dataset2.about}">dataset2</a></li>\n</ul>`,
  );
}

export function linkHeaderPage(): string {
  return page('An article', '', '<p>This page is covered by the dataset2 Capability List (see the HTTP Link header).</p>');
}

/** RFC 8288 header value: several links, a multi-valued quoted rel, a relative target. */
export function linkHeaderValue(): string {
  return '</style.css>; rel="stylesheet", <../dataset2/capabilitylist.xml>; rel="alternate resourcesync"; type="application/xml"';
}

export function aboutPage(title: string): string {
  return page(title, '', '<p>Information about this set of resources.</p>');
}

export function robotsTxt(base: string): string {
  return (
    `User-agent: *\nDisallow: /cgi-bin/\nDisallow: /tmp/\n\n` +
    `Sitemap: ${base}${PATHS.plainSitemap}\n` +
    `Sitemap: ${base}${PATHS.dataset1.resourceList}\n`
  );
}

/** An ordinary sitemap (no ResourceSync): robots.txt lists it next to the Resource List. */
export function plainSitemap(base: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n` +
    `  <url><loc>${base}/</loc></url>\n  <url><loc>${base}${PATHS.linkHeaderPage}</loc></url>\n</urlset>\n`
  );
}
