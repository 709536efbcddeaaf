// Extracts the example blocks of the specs in /work/shared/specs (markdown with ``` fences and <pre> blocks), for
// the tests: each with its example number, taken from the caption that follows it ("例 12." / "Example 7:").

export interface SpecExample {
  /** Example number from the caption after the block; null if none was found. */
  example: number | null;
  /** 1-based line in the markdown file where the block starts. */
  line: number;
  text: string;
  /** Starts like an XML document (declaration or a sitemap root), as opposed to HTTP, robots.txt or a fragment. */
  looksLikeDocument: boolean;
}

const CAPTION = /^\s*(?:例|Example)\s*(\d+)\s*[.:：]/;

export function extractExamples(markdown: string): SpecExample[] {
  const lines = markdown.split('\n');
  const blocks: { line: number; end: number; text: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trimStart().startsWith('```')) {
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith('```'); i++) body.push(lines[i]);
      blocks.push({ line: start + 2, end: i, text: body.join('\n') });
      continue;
    }
    const pre = /<pre>([\s\S]*?)<\/pre>/g;
    for (let m = pre.exec(lines[i]); m !== null; m = pre.exec(lines[i])) blocks.push({ line: i + 1, end: i, text: m[1] });
  }
  return blocks.map(({ line, end, text }) => {
    let example: number | null = null;
    // The caption may follow a second block of the same example (Change Notification, Example 1).
    for (let j = end + 1; j < lines.length && j <= end + 30; j++) {
      const caption = CAPTION.exec(lines[j]);
      if (caption) {
        example = Number(caption[1]);
        break;
      }
    }
    const head = text.trimStart();
    return { example, line, text: head, looksLikeDocument: /^(?:<\?xml|<urlset|<sitemapindex)/.test(head) };
  });
}
