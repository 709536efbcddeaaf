// What Settings says about how tokens are kept at rest: sealed by the system keychain (Electron's safeStorage), or
// in clear, said plainly, when the desktop app has no keychain or the UI is served by rsdesk serve.
import type { AppInfo } from '../../src-main/contract/types.ts';

/** How the token (and each mirror's copy of it) is kept at rest, in plain words; a warning when it is in clear. */
export function keptNote(info: Pick<AppInfo, 'adapter' | 'secrets'> | undefined): { text: string; warn: boolean } {
  if (info?.adapter === 'electron') {
    if (info.secrets?.sealed) return { text: "Kept sealed with the system keychain, as is each mirror's own copy of it.", warn: false };
    return {
      text:
        "This computer offers the app no keychain (Electron's safeStorage is not available here), so the token, and " +
        "each mirror's own copy of it, is kept unencrypted in the app's data folder, in files only your user account can read.",
      warn: true,
    };
  }
  return { text: "Stored unencrypted in the data folder of rsdesk serve, as is each mirror's own copy of it (readable only by your user account).", warn: false };
}

