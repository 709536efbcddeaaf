// Messages that quote their input (a URL, an attribute value, a server's error text) quote a bounded slice of it:
// a hostile document's 1 MiB attribute must not come back whole in a finding, a reply or a log line.

/** Characters of one quoted value kept in a message. */
export const QUOTE_CHARS = 200;
/** Characters of a whole message that crosses a boundary (a reply, a finding), whatever it quotes. */
export const MESSAGE_CHARS = 4_000;

/**
 * The text itself when it is short; else its start and end around an ellipsis that says how much was left out
 * (the end of a URL or a value often tells it apart from its neighbours).
 */
export function clip(text: string, max: number = QUOTE_CHARS): string {
  if (text.length <= max) return text;
  const keep = Math.max(2, max - 30);
  const head = Math.ceil((keep * 2) / 3);
  const tail = keep - head;
  const left = text.length - head - tail;
  return `${cut(text, 0, head)}…[${left.toLocaleString('en')} characters left out]…${cut(text, text.length - tail, text.length)}`;
}

/** A whole message, bounded as a last resort (the parts it quotes should already be clipped). */
export function clipMessage(message: string): string {
  return clip(message, MESSAGE_CHARS);
}

/** A slice that does not split a surrogate pair. */
function cut(text: string, start: number, end: number): string {
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start++;
  if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end--;
  return text.slice(start, end);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
