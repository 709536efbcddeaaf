// The renderer's Content-Security-Policy, one for both adapters: the Electron session's response header and the
// HTTP adapter's. The built index.html carries it as a meta tag too (for file:// loads, which have no headers),
// injected at build time from here (electron.vite.config.ts), so the two cannot drift apart.

const DIRECTIVES: readonly (readonly [string, string])[] = [
  ['default-src', "'self'"],
  ['connect-src', "'self'"],
  ['img-src', "'self' data:"],
  ['style-src', "'self' 'unsafe-inline'"],
  ['script-src', "'self'"],
  ['frame-ancestors', "'none'"],
  ['object-src', "'none'"],
  ['base-uri', "'none'"],
  ['form-action', "'none'"],
];

/**
 * Directives a `<meta http-equiv>` policy cannot carry (CSP Level 3, §3.3): browsers ignore them there and log an
 * error. Framing is refused by the header, and in Electron by the window itself.
 */
export const HEADER_ONLY_DIRECTIVES: readonly string[] = ['frame-ancestors'];

const join = (directives: readonly (readonly [string, string])[]) => directives.map(([name, value]) => `${name} ${value}`).join('; ');

export const CSP = join(DIRECTIVES);

/** The same policy for the meta tag: every directive but those a meta tag cannot carry. */
export const META_CSP = join(DIRECTIVES.filter(([name]) => !HEADER_ONLY_DIRECTIVES.includes(name)));

/** Parses a policy into directive name → value, for comparing two policies. */
export function parseCsp(policy: string): Map<string, string> {
  const directives = new Map<string, string>();
  for (const part of policy.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) directives.set(name.toLowerCase(), values.join(' '));
  }
  return directives;
}
