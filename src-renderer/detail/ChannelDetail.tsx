import type { NodeRef } from '../state/ui.ts';
import { DetailHeader } from './DetailHeader.tsx';
import { LinkTarget } from './LinkTarget.tsx';
import { SubscribeForm } from '../live/SubscribeForm.tsx';

/** A change-notification channel is a WebSub topic: nothing to fetch, only where to subscribe. */
export function ChannelDetail({ node }: { node: NodeRef }) {
  return (
    <div className="detail">
      <DetailHeader kind="Channel" title="Change Notification" url={node.url} />
      <div className="detail-scroll">
        <table className="kv">
          <tbody>
            <tr><th scope="row">topic</th><td className="mono wrap">{node.url}</td></tr>
            <tr>
              <th scope="row">hub</th>
              <td className="wrap">{node.hub ? <LinkTarget href={node.hub} rel="hub" /> : <span className="error-text">missing: the channel names no hub</span>}</td>
            </tr>
          </tbody>
        </table>
        <p className="muted note">
          Notifications are pushed by the hub (WebSub) to subscribers; the channel itself is not a document and is not fetched.
        </p>
        {node.hub && <SubscribeForm topic={node.url} hub={node.hub} capabilityListUrl={node.list ?? null} />}
      </div>
    </div>
  );
}
