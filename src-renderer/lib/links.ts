import { isKnownCapability } from './capabilities.ts';

/** Relations whose target is, by the spec, another ResourceSync document. */
const DOCUMENT_RELS = new Set(['up', 'index']);

/**
 * Whether a link can be opened inside the app as a ResourceSync document rather than in the system browser:
 * spec relations that point at documents, targets that carry a known capability, or XML files.
 */
export function isFollowable(href: string, rel?: string, capability?: string): boolean {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (capability === 'change-notification') return false;
  if (rel !== undefined && DOCUMENT_RELS.has(rel)) return true;
  if (isKnownCapability(capability)) return true;
  return /\.xml$/i.test(url.pathname);
}

export function isHttpUrl(href: string): boolean {
  try {
    const u = new URL(href);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
