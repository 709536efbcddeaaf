// The allow-list of command and event names. Plain constants, no dependencies: the sandboxed preload
// bundles this file and nothing else from the contract.

export const COMMAND_NAMES = [
  'app.info',
  'sources.list',
  'sources.add',
  'sources.remove',
  /** Undoes a remove (the same id, as it was). */
  'sources.restore',
  /** Credentials for a Source's origin (user name and password, or a token), kept sealed, sent to that origin only. */
  'sources.signIn',
  /** The origins signed in to (never a secret). */
  'sources.signIns',
  'sources.signOut',
  'discovery.run',
  'discovery.cancel',
  'documents.summary',
  'documents.entries',
  'documents.entry',
  'documents.raw',
  'settings.get',
  'settings.set',
  'shell.openExternal',
  // Checking a whole Source:
  'check.run',
  'check.cancel',
  // Mirrors (a local folder kept in step with a Source list) and their runs:
  'mirrors.list',
  'mirrors.get',
  'mirrors.create',
  'mirrors.update',
  /** HTTP basic credentials of the mirror's own (sent to its Source's origin only), or none with null. */
  'mirrors.setCredentials',
  /** A bearer token of the mirror's own, or none with null. */
  'mirrors.setToken',
  /** The mirror's extra request headers (name/value rows), sent to its Source's origin only. */
  'mirrors.setHeaders',
  /** The app stops listing it; its folder and files stay. */
  'mirrors.forget',
  /** A folder picked in the system's dialog (desktop app only). */
  'mirrors.chooseFolder',
  'mirrors.openFolder',
  'runs.start',
  'runs.pause',
  'runs.resume',
  'runs.cancel',
  'runs.list',
  'runs.failures',
  /** Runs the mirror's sync again: what failed is fetched again, what was verified is not. */
  'runs.retry',
  'runs.retryStanding',
  'audit.start',
  'audit.report',
  /** Writes a kept audit report to a file, every item (a native save dialog in the desktop app, a path in a browser). */
  'audit.export',
  /** Stops the mirror's export under way: its partial file is removed, the file chosen is left as it was. */
  'audit.exportCancel',
  // Live change notifications (WebSub) and pings:
  'live.status',
  'live.settings.set',
  'live.selftest',
  'live.subscriptions',
  'live.subscribe',
  'live.unsubscribe',
  'live.recent',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

export const EVENT_NAMES = [
  'discovery.step',
  'discovery.fetching',
  'sources.changed',
  'document.progress',
  // Checking a whole Source:
  'check.progress',
  // Mirrors:
  'mirrors.changed',
  'mirror.progress',
  'mirror.ended',
  'audit.ended',
  /** An audit report being written to a file: a few times a second at most. */
  'audit.exportProgress',
  /** Live events in batches (a few a second at most). */
  'live.events',
  /**
   * From the adapter, not the service: events were lost and cannot be given again (the browser's event stream came
   * back after more happened than the server keeps, or the server restarted). Whatever the page shows is read again.
   */
  'events.missed',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export function isCommandName(name: unknown): name is CommandName {
  return typeof name === 'string' && (COMMAND_NAMES as readonly string[]).includes(name);
}

export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && (EVENT_NAMES as readonly string[]).includes(name);
}

/** The first SSE event of a new stream of the HTTP adapter: no payload, its id is where the stream starts. */
export const SSE_STREAM_START = 'stream.start';

/** IPC channel names used by the Electron adapter. */
export const IPC_INVOKE = 'rs:invoke';
export const IPC_EVENT = 'rs:event';
