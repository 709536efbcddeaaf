// `Sitemap:` lines of robots.txt (core spec 6.3.4; sitemaps.org "Informing search engine crawlers").

/** Absolute sitemap URLs in file order, without duplicates. */
export function sitemapsInRobots(text: string, robotsUrl: string): string[] {
  const urls: string[] = [];
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const match = /^sitemap\s*:\s*(\S+)/i.exec(line);
    if (!match) continue;
    try {
      const url = new URL(match[1], robotsUrl).href;
      if (!urls.includes(url)) urls.push(url);
    } catch {
      // not a URL: skipped
    }
  }
  return urls;
}
