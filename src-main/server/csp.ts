// The renderer's Content-Security-Policy, one for both adapters: the Electron session's response header and the
// HTTP adapter's. src-renderer/index.html carries the same policy as a meta tag for file:// loads.
export const CSP =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
  "script-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'none'";
