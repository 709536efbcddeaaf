// The allow-list of command and event names. Plain constants, no dependencies: the sandboxed preload
// bundles this file and nothing else from the contract.

export const COMMAND_NAMES = [
  'app.info',
  'sources.list',
  'sources.add',
  'sources.remove',
  /** Undoes a remove (the same id, as it was). */
  'sources.restore',
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
  /** Live events in batches (a few a second at most). */
  'live.events',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export function isCommandName(name: unknown): name is CommandName {
  return typeof name === 'string' && (COMMAND_NAMES as readonly string[]).includes(name);
}

export function isEventName(name: unknown): name is EventName {
  return typeof name === 'string' && (EVENT_NAMES as readonly string[]).includes(name);
}

/** IPC channel names used by the Electron adapter. */
export const IPC_INVOKE = 'rs:invoke';
export const IPC_EVENT = 'rs:event';
