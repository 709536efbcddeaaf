// What a credential may contain, one rule for the app (commands.ts) and rsdesk: a control character or (in a token) a
// space breaks the Authorization header, and a credential kept with one would make every later request fail.

export const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why a bearer token cannot be used, or null when it can. */
export function tokenProblem(token: string): string | null {
  if (CONTROL.test(token) || /\s/.test(token)) return 'The token contains a space, a line break or another control character';
  // RFC 6750's b64token is ASCII; a curly quote or a letter of another script is a paste accident, and one beyond
  // Latin-1 cannot be sent at all: every request to the Source failed with "invalid authorization header".
  return /[^\u0021-\u007e]/.test(token) ? 'The token contains a character other than plain ASCII letters, digits and signs (a curly quote, an accented letter…)' : null;
}

/** Why a basic user name cannot be used, or null when it can. */
export function basicUserProblem(user: string): string | null {
  if (user.includes(':')) return 'A user name cannot contain a colon (HTTP basic authentication does not allow one)';
  return CONTROL.test(user) ? 'The user name contains a line break or another control character' : null;
}

/** Why a basic password cannot be used, or null when it can. */
export function basicPasswordProblem(password: string): string | null {
  return CONTROL.test(password) ? 'The password contains a line break or another control character' : null;
}
