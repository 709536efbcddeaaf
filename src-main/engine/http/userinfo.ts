// A URL written with a user name and password in it (`https://me:secret@host/…`). Neither undici nor fetch sends
// them, and a URL is kept (a mirror's binding, a saved Source) and shown (every message naming it) as it is: so they
// are taken out before the URL goes anywhere, and the caller decides what to do with them.

export interface Userinfo {
  /** The URL without them. */
  url: string;
  user: string;
  password: string;
}

/** The user name and password in `text`, decoded, with the URL without them; null when there are none. */
export function splitUserinfo(text: string): Userinfo | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.username === '' && url.password === '') return null;
  const user = safeDecode(url.username);
  const password = safeDecode(url.password);
  url.username = '';
  url.password = '';
  return { url: url.href, user, password };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * `text` fit to be quoted in a message: without a user name and password, also when it is not a valid URL (a port
 * out of range, a space, another scheme), where splitUserinfo finds none and a refusal quoted them whole. In a text
 * that does not parse, what stands before the last "@" of its first part is taken out.
 */
export function hideUserinfo(text: string): string {
  // Without "//" there is no authority, hence no user name or password ("mailto:someone@example.org" is quoted whole).
  if (!text.includes('//')) return text;
  try {
    const url = new URL(text.trim());
    if (url.username === '' && url.password === '') return text;
    url.username = '';
    url.password = '';
    return url.href;
  } catch {
    return text.replace(/^(\s*(?:[a-z][a-z0-9+.-]*:)?\/\/)[^\s?#]*@/i, '$1…@');
  }
}
