// Syntax highlighting of raw XML, split into lines so the raw view can be virtualized and scrolled to a line.
import hljs from 'highlight.js/lib/core';
import xml from 'highlight.js/lib/languages/xml';

hljs.registerLanguage('xml', xml);

/** Above this size highlighting costs more than it helps; the text is shown plain (still escaped). */
const HIGHLIGHT_LIMIT = 2 * 1024 * 1024;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * hljs output is HTML whose `<span>`s may cross line breaks (multi-line tags, comments). Each line gets the
 * spans open at its start re-opened and all spans closed at its end, so every line is well-formed on its own.
 */
export function splitHighlightedLines(html: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let line = '';
  const tag = /<span[^>]*>|<\/span>|\n/g;
  let last = 0;
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    line += html.slice(last, m.index);
    last = tag.lastIndex;
    const token = m[0];
    if (token === '\n') {
      lines.push(line + '</span>'.repeat(open.length));
      line = open.join('');
    } else if (token === '</span>') {
      open.pop();
      line += token;
    } else {
      open.push(token);
      line += token;
    }
  }
  line += html.slice(last);
  lines.push(line + '</span>'.repeat(open.length));
  return lines;
}

/** Lines of HTML (escaped, highlighted when not too large) for the raw XML view. */
export function highlightXmlLines(text: string): string[] {
  const normalized = text.replace(/\r\n?/g, '\n');
  if (normalized.length > HIGHLIGHT_LIMIT) return normalized.split('\n').map(escapeHtml);
  const html = hljs.highlight(normalized, { language: 'xml', ignoreIllegals: true }).value;
  return splitHighlightedLines(html);
}
