// A hub's delivery to a callback (WebSub §7, §8; CN §4.3), checked before anything is kept: the subscription must
// exist and not have ended (410 Gone otherwise, which tells the hub to stop), a subscription with a secret needs a
// valid X-Hub-Signature (a missing or wrong one is acknowledged with 2xx and discarded, as §8 asks, and logged),
// the Link header's rel="self" must name the subscription's topic. What passes is stored durably; only then is the
// hub answered. Everything about the payload itself is judged afterwards, from the stored copy.
import { createHash } from 'node:crypto';
import { clip } from '../clip.ts';
import { parseLinkHeader } from '../http/link-header.ts';
import type { LiveEventInput } from './model.ts';
import { checkSignature, SIGNATURE_METHODS, type SignatureMethod } from './signature.ts';
import type { LiveStore, SubscriptionRow } from './store.ts';

export interface Delivery {
  headers: Record<string, string>;
  body: Buffer;
}

export type DeliveryAnswer = { status: number; body: string; inboxId?: number; headers?: Record<string, string> };

/** `discarded` hears each delivery refused here (the engine lists a few a window: anyone with the URL may send them). */
export async function receiveDelivery(store: LiveStore, discarded: (input: LiveEventInput) => void, row: SubscriptionRow, d: Delivery): Promise<DeliveryAnswer> {
  const base = { subscriptionId: row.id, topic: row.topic };
  if (row.status === 'unsubscribed' || row.status === 'denied') {
    discarded({ type: 'rejected', what: 'delivery', reason: `a delivery for a subscription that has ended (${row.status})`, ...base });
    return { status: 410, body: 'This subscription has ended\n' };
  }
  if (row.secret !== null) {
    const check = checkSignature(d.headers['x-hub-signature'], row.secret, d.body);
    if (!check.ok) {
      discarded({ type: 'rejected', what: 'delivery', reason: `discarded: ${check.reason}`, ...base });
      return { status: 202, body: 'Discarded\n' };
    }
    // WebSub lets the hub choose the method, sha1 included. Once it has signed with a stronger one, a weaker one is
    // what a forger who could break it (or strip the hub's choice) would send: refused as a downgrade.
    const floor = store.signatureFloor(row.id) as SignatureMethod | null;
    const rank = (m: SignatureMethod) => SIGNATURE_METHODS.indexOf(m);
    if (floor !== null && SIGNATURE_METHODS.includes(floor) && rank(check.method) < rank(floor)) {
      discarded({ type: 'rejected', what: 'delivery', reason: `discarded: signed with ${check.method}, but this hub signed with ${floor} before (a downgrade)`, ...base });
      return { status: 202, body: 'Discarded\n' };
    }
    if (floor === null || rank(check.method) > rank(floor)) store.setSignatureFloor(row.id, check.method);
  }
  const link = d.headers.link;
  if (link !== undefined) {
    const self = parseLinkHeader(link, row.topic).find((l) => l.rels.includes('self'));
    if (self && self.href !== row.topic) {
      discarded({ type: 'rejected', what: 'delivery', reason: `discarded: its Link rel="self" names ${clip(self.href)}, not the subscription's topic`, ...base });
      return { status: 202, body: 'Discarded\n' };
    }
  }
  const sha256 = createHash('sha256').update(d.body).digest('hex');
  const inboxId = await store.receive({ subscriptionId: row.id, sha256, contentType: d.headers['content-type'] ?? null, link: link ?? null, body: d.body });
  return { status: 202, body: 'Accepted\n', inboxId };
}

/** What the Link header says that disagrees with the subscription (kept as warnings on the notification). */
export function linkWarnings(link: string | null, row: SubscriptionRow, capabilityListUrl: string | null): string[] {
  if (link === null) return ['the delivery has no Link header (rel="self" and rel="hub" are mandatory, CN §4.3)'];
  const links = parseLinkHeader(link, row.topic);
  const warnings: string[] = [];
  const hub = links.find((l) => l.rels.includes('hub'));
  if (!hub) warnings.push('the Link header has no rel="hub"');
  else if (hub.href !== row.hub) warnings.push(`the Link rel="hub" names ${clip(hub.href)}, not the hub subscribed to`);
  if (!links.some((l) => l.rels.includes('self'))) warnings.push('the Link header has no rel="self"');
  const rs = links.find((l) => l.rels.includes('resourcesync'));
  if (rs && capabilityListUrl !== null && rs.href !== capabilityListUrl) {
    warnings.push(`the Link rel="resourcesync" names ${clip(rs.href)}, not the mirror's Capability List`);
  }
  return warnings;
}
