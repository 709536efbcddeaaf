import { useEffect, useMemo, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { errorMessage } from '../bridge/index.ts';
import { RAW_LIMIT, RAW_LIMIT_MAX, useRaw } from '../data/queries.ts';
import { formatBytes, formatCount } from '../lib/format.ts';
import { highlightXmlLines } from '../lib/highlight.ts';
import { Spinner } from '../common/Spinner.tsx';

const LINE_HEIGHT = 18;

interface Props {
  url: string;
  /** Scroll to and mark this 1-based line; `seq` changes when the same line is asked for again. */
  target: { line: number; seq: number } | null;
  /** Shown when the target line lies past the part of the document the engine keeps (e.g. the parsed entry). */
  beyond?: ReactNode;
}

export function RawXml({ url, target, beyond: beyondContent }: Props) {
  const [limit, setLimit] = useState(RAW_LIMIT);
  const raw = useRaw(url, limit);
  const scrollRef = useRef<HTMLDivElement>(null);
  const lines = useMemo(() => (raw.data ? highlightXmlLines(raw.data.text) : []), [raw.data]);
  const shownBytes = useMemo(() => (raw.data ? new TextEncoder().encode(raw.data.text).length : 0), [raw.data]);
  // The engine keeps only the head of big documents: an answer shorter than asked for is all there is.
  const capped = raw.data !== undefined && raw.data.truncated && raw.data.text.length < limit;
  const canAskMore = raw.data?.truncated === true && !capped && limit < RAW_LIMIT_MAX;

  const virtualizer = useVirtualizer({
    count: lines.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => LINE_HEIGHT,
    overscan: 30,
  });

  const targetLine = target?.line ?? null;
  useEffect(() => {
    if (targetLine !== null && targetLine >= 1 && targetLine <= lines.length) {
      virtualizer.scrollToIndex(targetLine - 1, { align: 'center' });
    }
  }, [targetLine, target?.seq, lines.length, virtualizer]);

  // A target line past the part shown (an entry deep in a big list): ask for more of the document while there is more.
  const wantMore = canAskMore && targetLine !== null && targetLine > lines.length;
  useEffect(() => {
    if (wantMore) setLimit((l) => Math.min(l * 4, RAW_LIMIT_MAX));
  }, [wantMore]);

  if (raw.isPending && !raw.data) {
    return (
      <div className="empty">
        <Spinner /> {limit > RAW_LIMIT ? `Loading up to ${formatBytes(limit)} of the raw document…` : 'Loading the raw document…'}
      </div>
    );
  }
  if (raw.isError) {
    return <div className="alert alert-error" role="alert">Could not load the raw document: {errorMessage(raw.error)}</div>;
  }
  const data = raw.data!;
  const beyond = targetLine !== null && targetLine > lines.length && !wantMore;
  const gutter = String(lines.length).length;

  return (
    <div className="raw">
      {data.truncated && (
        <div className="notice" role="note">
          Showing first {formatCount(Math.round(shownBytes / 1024))} KiB of {formatBytes(data.bytes)}.
          {canAskMore && (
            <button type="button" className="btn-small" onClick={() => setLimit(Math.min(limit * 4, RAW_LIMIT_MAX))}>
              Show more
            </button>
          )}
        </div>
      )}
      {beyond && (
        <div className="raw-beyond" role="note">
          <div className="notice">Line {formatCount(targetLine)} is past the part of the document shown here.</div>
          {beyondContent}
        </div>
      )}
      <div ref={scrollRef} className="raw-scroll" tabIndex={0} aria-label="Raw XML" role="region">
        <div className="raw-inner" style={{ height: virtualizer.getTotalSize(), ['--gutter' as string]: `${gutter + 1}ch` }}>
          {virtualizer.getVirtualItems().map((item) => (
            <div
              key={item.key}
              className={`raw-line${targetLine === item.index + 1 ? ' raw-target' : ''}`}
              data-line={item.index + 1}
              style={{ transform: `translateY(${item.start}px)` }}
            >
              <span className="raw-no" aria-hidden="true">{item.index + 1}</span>
              <code className="hljs" dangerouslySetInnerHTML={{ __html: lines[item.index] || ' ' }} />
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}

/** A few lines of XML, highlighted, not virtualized. */
export function XmlSnippet({ xml, label }: { xml: string; label: string }) {
  const lines = useMemo(() => highlightXmlLines(xml), [xml]);
  return (
    <pre className="xml-snippet" aria-label={label}>
      {lines.map((html, i) => (
        <code key={i} className="hljs" dangerouslySetInnerHTML={{ __html: `${html}\n` }} />
      ))}
    </pre>
  );
}
