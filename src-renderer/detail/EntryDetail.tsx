import type { Entry } from '../../src-main/engine/documents/model.ts';
import { errorMessage } from '../bridge/index.ts';
import { useEntry, useSummary } from '../data/queries.ts';
import { capabilityLabel } from '../lib/capabilities.ts';
import { useUi } from '../state/ui.ts';
import { Spinner } from '../common/Spinner.tsx';
import { DetailHeader } from './DetailHeader.tsx';
import { LinkTarget } from './LinkTarget.tsx';
import { LinksTable, MdTable } from './MdTable.tsx';
import { RawXml, XmlSnippet } from './RawXml.tsx';
import { entryXml } from '../lib/entryXml.ts';
import { Tabs } from './Tabs.tsx';

export function EntryDetail({ url, index }: { url: string; index: number }) {
  const entry = useEntry(url, index);
  const doc = useSummary(url).data;
  const selectEntry = useUi((s) => s.selectEntry);
  const rawTarget = useUi((s) => (s.rawTarget?.url === url ? s.rawTarget : null));
  const showRawLine = useUi((s) => s.showRawLine);
  const docLabel = capabilityLabel(doc?.capability, doc?.isIndex ?? false);
  const data = entry.data;
  // Entries of a Source Description, Capability List or index name documents, with their capability.
  const childCapability = data?.md.capability ?? (doc?.isIndex ? doc.capability : undefined);

  return (
    <div className="detail">
      <DetailHeader
        kind="Entry"
        title={`#${index + 1}`}
        url={data?.loc ?? url}
        crumb={
          <button type="button" className="crumb" onClick={() => selectEntry(null)} title="Show the document">
            {docLabel} ›
          </button>
        }
      />
      {!data ? (
        entry.isError ? (
          <div className="alert alert-error" role="alert">Could not read entry {index + 1}: {errorMessage(entry.error)}</div>
        ) : (
          <div className="empty"><Spinner /> Loading the entry…</div>
        )
      ) : (
        <Tabs
          tabs={[
            { id: 'meta', label: 'Metadata' },
            { id: 'raw', label: 'Raw XML' },
          ]}
        >
          {(tab) =>
            tab === 'raw' ? (
              <RawXml
                url={url}
                target={rawTarget ?? { line: data.line, seq: 0 }}
                beyond={
                  <XmlSnippet
                    label="Entry as parsed"
                    xml={`<!-- entry ${index + 1}, line ${data.line}, as parsed -->\n${entryXml(data, doc?.root === 'sitemapindex' ? 'sitemap' : 'url')}`}
                  />
                }
              />
            ) : (
              <div className="detail-scroll meta-grid">
                <div>
                  <EntryFacts entry={data} url={url} capability={childCapability} onLine={showRawLine} />
                  <MdTable md={data.md} />
                </div>
                <LinksTable links={data.links} />
              </div>
            )
          }
        </Tabs>
      )}
    </div>
  );
}

interface FactsProps {
  entry: Entry;
  url: string;
  capability: string | undefined;
  onLine(url: string, line: number): void;
}

function EntryFacts({ entry, url, capability, onLine }: FactsProps) {
  return (
    <section className="detail-section" aria-label="Entry">
      <h3>Entry</h3>
      <table className="kv">
        <tbody>
          <tr>
            <th scope="row">loc</th>
            <td className="wrap"><LinkTarget href={entry.loc} capability={capability} /></td>
          </tr>
          {entry.lastmod !== undefined && (
            <tr><th scope="row">lastmod</th><td className="mono">{entry.lastmod}</td></tr>
          )}
          {entry.changefreq !== undefined && (
            <tr><th scope="row">changefreq</th><td className="mono">{entry.changefreq}</td></tr>
          )}
          <tr>
            <th scope="row">line</th>
            <td>
              <button type="button" className="line-link" onClick={() => onLine(url, entry.line)} title="Show in raw XML">
                {entry.line}
              </button>
            </td>
          </tr>
        </tbody>
      </table>
    </section>
  );
}
