// Secrets at rest (the bearer token). The store does not know how to encrypt: the Electron main process hands it
// a box backed by the OS keychain (safeStorage); without one (rsdesk serve), values are stored as they are.

export interface SecretBox {
  /** Returns text safe to store. */
  seal(plain: string): string;
  /** Returns the plain value; throws when the sealed text cannot be opened (another machine or user). */
  open(sealed: string): string;
}
