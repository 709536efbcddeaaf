import { describe, expect, it } from 'vitest';
import { keptNote } from './kept-note.ts';

describe('how Settings says the token is kept', () => {
  it('sealed by the keychain in the desktop app; a plain warning when safeStorage is not available; in clear under rsdesk serve', () => {
    expect(keptNote({ adapter: 'electron', secrets: { sealed: true, description: 'sealed with the OS keychain in /x' } })).toEqual({
      text: "Kept sealed with the system keychain, as is each mirror's own copy of it.",
      warn: false,
    });
    const none = keptNote({ adapter: 'electron', secrets: { sealed: false, description: 'unsealed …' } });
    expect(none.warn).toBe(true);
    expect(none.text).toMatch(/^This computer offers the app no keychain \(Electron's safeStorage is not available here\), so the token, and each mirror's own copy of it, is kept unencrypted/);
    expect(keptNote({ adapter: 'http', secrets: { sealed: false, description: 'unsealed …' } })).toMatchObject({ text: expect.stringMatching(/^Stored unencrypted in the data folder of rsdesk serve/), warn: false });
  });
});
