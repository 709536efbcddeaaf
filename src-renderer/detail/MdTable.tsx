import type { RsLn, RsMd } from '../../src-main/engine/documents/model.ts';
import { LinkTarget } from './LinkTarget.tsx';

/** A hash attribute may hold several space-separated `alg:digest` tokens: one per line. */
function HashTokens({ value }: { value: string }) {
  const tokens = value.split(/\s+/).filter(Boolean);
  return (
    <>
      {tokens.map((token, i) => (
        <span key={i} className="hash-token">{token}</span>
      ))}
    </>
  );
}

/** Every rs:md attribute, as written. */
export function MdTable({ md, caption = 'rs:md' }: { md: RsMd; caption?: string }) {
  const rows = Object.entries(md).filter(([, v]) => v !== undefined);
  return (
    <section className="detail-section" aria-label={caption}>
      <h3>{caption}</h3>
      {rows.length === 0 ? (
        <p className="empty">No rs:md attributes.</p>
      ) : (
        <table className="kv">
          <tbody>
            {rows.map(([name, value]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td className="mono wrap">
                  {name === 'hash' ? <HashTokens value={String(value)} /> : String(value)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Every rs:ln link: rel, href, and all other attributes. */
export function LinksTable({ links, caption = 'rs:ln' }: { links: RsLn[]; caption?: string }) {
  return (
    <section className="detail-section" aria-label={caption}>
      <h3>{caption}</h3>
      {links.length === 0 ? (
        <p className="empty">No rs:ln links.</p>
      ) : (
        <table className="grid-table links">
          <colgroup>
            <col className="col-rel" />
            <col className="col-href" />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">rel</th>
              <th scope="col">href</th>
              <th scope="col">attributes</th>
            </tr>
          </thead>
          <tbody>
            {links.map((link, i) => {
              const { rel, href, ...rest } = link;
              const others = Object.entries(rest).filter(([, v]) => v !== undefined);
              return (
                <tr key={i}>
                  <td><span className="pill">{rel}</span></td>
                  <td className="wrap"><LinkTarget href={href} rel={rel} /></td>
                  <td>
                    {others.map(([name, value]) => (
                      <span key={name} className="attr">
                        <span className="attr-name">{name}</span>=<span className="mono">{String(value)}</span>
                      </span>
                    ))}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
