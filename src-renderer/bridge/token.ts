// The session token of the HTTP adapter.

const TOKEN_KEY = 'rsdesk.token';

/**
 * The token arrives once in the fragment (`#token=…`, never sent to the server in a Referer); it is kept in
 * sessionStorage so a reload still works, and removed from the address bar so it is not bookmarked or shared.
 */
export function takeToken(): string | null {
  const fromHash = takeHashToken();
  if (fromHash !== null) return fromHash;
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** The token of an address with `#token=…` (kept, and taken out of the address bar), or null when it has none. */
export function takeHashToken(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    const token = decodeURIComponent(match[1]);
    try {
      sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
      // Storage may be disabled; the token then lives as long as this page.
    }
    history.replaceState(history.state, '', location.pathname + location.search);
    return token;
  }
  return null;
}
