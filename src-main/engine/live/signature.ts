// Authenticated content distribution (WebSub §8): a hub that was given a secret signs each delivery with
// `X-Hub-Signature: method=signature`, an HMAC of the raw body with the secret, method one of sha1, sha256, sha384,
// sha512. The signature is compared in constant time: a byte-by-byte comparison would tell a forger how much of a
// guess is right.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_METHODS = ['sha1', 'sha256', 'sha384', 'sha512'] as const;
export type SignatureMethod = (typeof SIGNATURE_METHODS)[number];

export type SignatureCheck = { ok: true; method: SignatureMethod } | { ok: false; reason: string };

/** The header value a hub sends for `body` (used by the test hub and the benchmark). */
export function signBody(method: SignatureMethod, secret: string, body: Uint8Array): string {
  return `${method}=${createHmac(method, secret).update(body).digest('hex')}`;
}

/** Checks `X-Hub-Signature` of a delivery made for a subscription with `secret`. */
export function checkSignature(header: string | undefined, secret: string, body: Uint8Array): SignatureCheck {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'the delivery carries no X-Hub-Signature, but the subscription has a secret' };
  const match = /^\s*([A-Za-z0-9]+)=([0-9A-Fa-f]*)\s*$/.exec(header);
  if (!match) return { ok: false, reason: 'the X-Hub-Signature header is not of the form method=hexdigest' };
  const method = match[1].toLowerCase() as SignatureMethod;
  if (!SIGNATURE_METHODS.includes(method)) {
    return { ok: false, reason: `the X-Hub-Signature method "${match[1].slice(0, 20)}" is not one of ${SIGNATURE_METHODS.join(', ')}` };
  }
  const expected = createHmac(method, secret).update(body).digest();
  const given = Buffer.from(match[2].length % 2 === 0 ? match[2] : '', 'hex');
  // timingSafeEqual needs equal lengths; a wrong length is compared against the expected digest itself so the
  // time taken does not depend on what was sent.
  const same = given.length === expected.length ? timingSafeEqual(given, expected) : (timingSafeEqual(expected, expected), false);
  return same ? { ok: true, method } : { ok: false, reason: `the X-Hub-Signature (${method}) does not match the body` };
}
