import type { DocumentView } from '../../src-main/contract/types.ts';
import { formatTime } from '../lib/format.ts';

/** "at … · completed …" for snapshots, "from … until …" for change documents: what time the document covers. */
export function timeSpan(view: DocumentView): { text: string; title: string } {
  const md = view.md;
  const parts: string[] = [];
  const full: string[] = [];
  const add = (name: string, value: string | undefined) => {
    if (!value) return;
    parts.push(`${name} ${formatTime(value)}`);
    full.push(`${name} ${value}`);
  };
  if (md.from || md.until) {
    add('from', md.from);
    add('until', md.until);
  } else {
    add('at', md.at);
    add('completed', md.completed);
  }
  return { text: parts.join(' · '), title: full.join('\n') };
}
