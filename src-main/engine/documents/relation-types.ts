// §7 (rs:ln): "Valid relation types MUST be registered in the IANA Link Relation Type Registry or expressed as URIs
// as specified in RFC 5988 §4.2" (now RFC 8288 §2.1). A value that is neither is what a Source gets wrong when it
// invents a name ("mirror" for "duplicate", "parent" for "up"): a client that follows links by relation type then
// misses the link.

/**
 * The registered relation types (IANA's registry, https://www.iana.org/assignments/link-relations/, as of 2025), plus
 * `resourcesync`, which the ResourceSync framework itself defines for discovery. Compared case-insensitively (RFC
 * 8288 §2.1.1). The registry grows: a value registered since is reported too, in words that say so.
 */
export const REGISTERED_RELATION_TYPES: ReadonlySet<string> = new Set([
  'about', 'acl', 'alternate', 'amphtml', 'api-catalog', 'appendix', 'apple-touch-icon', 'apple-touch-startup-image',
  'archives', 'author', 'blocked-by', 'bookmark', 'canonical', 'chapter', 'cite-as', 'collection',
  'compression-dictionary', 'contents', 'convertedfrom', 'copyright', 'create-form', 'current', 'deprecation',
  'describedby', 'describes', 'disclosure', 'dns-prefetch', 'duplicate', 'edit', 'edit-form', 'edit-media',
  'enclosure', 'external', 'first', 'glossary', 'help', 'hosts', 'hub', 'icon', 'index', 'intervalafter',
  'intervalbefore', 'intervalcontains', 'intervaldisjoint', 'intervalduring', 'intervalequals', 'intervalfinishedby',
  'intervalfinishes', 'intervalin', 'intervalmeets', 'intervalmetby', 'intervaloverlappedby', 'intervaloverlaps',
  'intervalstartedby', 'intervalstarts', 'item', 'last', 'latest-version', 'license', 'linkset', 'lrdd', 'manifest',
  'mask-icon', 'media-feed', 'memento', 'micropub', 'modulepreload', 'monitor', 'monitor-group', 'next',
  'next-archive', 'nofollow', 'noopener', 'noreferrer', 'opener', 'openid2.local_id', 'openid2.provider', 'original',
  'p3pv1', 'payment', 'pingback', 'preconnect', 'predecessor-version', 'prefetch', 'preload', 'prerender', 'prev',
  'prev-archive', 'preview', 'previous', 'privacy-policy', 'profile', 'publication', 'related', 'replies', 'restconf',
  'ruleinput', 'search', 'section', 'self', 'service', 'service-desc', 'service-doc', 'service-meta',
  'siptrunkingcapability', 'sponsored', 'start', 'status', 'stylesheet', 'subsection', 'successor-version', 'sunset',
  'tag', 'terms-of-service', 'timegate', 'timemap', 'type', 'ugc', 'up', 'version-history', 'via', 'webmention',
  'working-copy', 'working-copy-of',
  'resourcesync',
]);

/** An extension relation type: an absolute URI (RFC 8288 §2.1.2), such as the spec's own patch relation. */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/;

/**
 * The relation types of a `rel` value (one or more, separated by spaces) that are neither registered nor URIs, in
 * the order given; empty when every one is valid.
 */
export function unregisteredRelationTypes(rel: string): string[] {
  const out: string[] = [];
  for (const type of rel.trim().split(/\s+/)) {
    if (type === '' || URI.test(type) || REGISTERED_RELATION_TYPES.has(type.toLowerCase())) continue;
    out.push(type);
  }
  return out;
}
