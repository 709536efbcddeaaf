// The Bridge over the HTTP + SSE adapter (`rsdesk serve`): used in a plain browser, where no preload exists.
import type { Bridge } from '../../src-main/contract/bridge.ts';
import { EVENT_NAMES, SSE_STREAM_START } from '../../src-main/contract/names.ts';
import type { EventName } from '../../src-main/contract/names.ts';
import type { CommandError } from '../../src-main/contract/types.ts';
import { BridgeError } from './errors.ts';

/** How long an invoke waits for a connecting event stream, so events of the command it starts are not missed. */
const STREAM_WAIT_MS = 3000;
/** A stream the browser gave up on (the server answered with an error) is opened again after this, doubling. */
const REOPEN_FIRST_MS = 1000;
const REOPEN_MAX_MS = 30_000;
/**
 * A stream down this long is said to be lost (`onReachable(false)`): a drop the browser mends by itself within a
 * second or so is not worth a word.
 */
const LOST_AFTER_MS = 2500;

type Envelope = { ok: true; result: unknown } | { ok: false; error: CommandError };
type AnyListener = (payload: unknown) => void;

export interface HttpBridgeOptions {
  /** Origin of the app server; '' (the default) is the page's own. */
  base?: string;
  fetch?: typeof fetch;
  EventSource?: typeof EventSource;
  /**
   * Told `false` when the app server cannot be reached (the event stream stayed down, or a command could not be
   * sent), `true` when its event stream is open again.
   */
  onReachable?: (reachable: boolean) => void;
}

/** The bridge, and a way to give it the token of a new address pasted into the same tab (the app server restarted). */
export interface HttpBridge extends Bridge {
  setToken(token: string | null): void;
}

// What a person can do about a failure of the page's own connection: the technical cause helps nobody here.
const UNREACHABLE =
  'The app server cannot be reached: rsdesk serve may have stopped. Start rsdesk serve again, then open the address it prints (pasting it into this tab is enough).';
const NOT_SIGNED_IN =
  'This page has no valid session token (rsdesk serve gives a new one each time it starts). Open the address rsdesk serve printed: pasting it into this tab is enough.';
const UNREADABLE = 'The app server gave an answer this page cannot read. Reload the page; if it happens again, start rsdesk serve again.';

export function createHttpBridge(token: string | null, options: HttpBridgeOptions = {}): HttpBridge {
  const base = options.base ?? '';
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const Source = options.EventSource ?? EventSource;
  const listeners = new Map<EventName, Set<AnyListener>>();
  let source: EventSource | null = null;
  let opened: Promise<void> | null = null;
  /**
   * The id of the last event read. The EventSource sends it again by itself when it reconnects (Last-Event-ID), and
   * the server then gives what was missed; a stream opened anew (after the browser gave up, or after nobody
   * listened for a while) passes it in the URL.
   */
  let lastEventId = '';
  let reopenTimer: ReturnType<typeof setTimeout> | null = null;
  let reopenDelay = REOPEN_FIRST_MS;
  let lostTimer: ReturnType<typeof setTimeout> | null = null;
  /** What `onReachable` was last told. */
  let reachable = true;

  function tell(next: boolean): void {
    if (next === reachable) return;
    reachable = next;
    options.onReachable?.(next);
  }

  function streamDown(): void {
    if (lostTimer !== null || !reachable) return;
    lostTimer = setTimeout(() => {
      lostTimer = null;
      if (source === null || source.readyState !== Source.OPEN) tell(false);
    }, LOST_AFTER_MS);
  }

  function clearLostTimer(): void {
    if (lostTimer !== null) clearTimeout(lostTimer);
    lostTimer = null;
  }

  function listenerCount(): number {
    let n = 0;
    for (const set of listeners.values()) n += set.size;
    return n;
  }

  function openStream(): void {
    if (source) return;
    const resume = lastEventId ? `&lastEventId=${encodeURIComponent(lastEventId)}` : '';
    const es = new Source(`${base}/api/events?token=${encodeURIComponent(token ?? '')}${resume}`);
    source = es;
    opened = new Promise<void>((resolve) => {
      const done = () => {
        es.removeEventListener('open', done);
        es.removeEventListener('error', done);
        resolve();
      };
      es.addEventListener('open', done);
      es.addEventListener('error', done);
    });
    es.addEventListener('open', () => {
      reopenDelay = REOPEN_FIRST_MS;
      clearLostTimer();
      tell(true);
    });
    es.addEventListener('error', () => {
      if (source === es) streamDown();
      // CONNECTING: the browser tries again by itself. CLOSED: it gave up for good (the server answered with an
      // error), so a new stream is opened later, from the last event read.
      if (es.readyState !== Source.CLOSED || source !== es) return;
      source = null;
      opened = null;
      reopenTimer = setTimeout(() => {
        reopenTimer = null;
        if (listenerCount() > 0) openStream();
      }, reopenDelay);
      reopenDelay = Math.min(reopenDelay * 2, REOPEN_MAX_MS);
    });
    es.addEventListener(SSE_STREAM_START, (message: MessageEvent<string>) => {
      if (message.lastEventId) lastEventId = message.lastEventId;
    });
    for (const name of EVENT_NAMES) {
      es.addEventListener(name, (message: MessageEvent<string>) => {
        if (message.lastEventId) lastEventId = message.lastEventId;
        let payload: unknown;
        try {
          payload = JSON.parse(message.data);
        } catch {
          return;
        }
        for (const listener of [...(listeners.get(name) ?? [])]) listener(payload);
      });
    }
  }

  function closeStream(): void {
    source?.close();
    source = null;
    opened = null;
    if (reopenTimer) clearTimeout(reopenTimer);
    reopenTimer = null;
    // Nobody listens: nothing is said of a stream nobody wants.
    clearLostTimer();
  }

  async function streamReady(): Promise<void> {
    if (!source || source.readyState !== Source.CONNECTING || !opened) return;
    await Promise.race([opened, new Promise((resolve) => setTimeout(resolve, STREAM_WAIT_MS))]);
  }

  async function send(command: string, args: unknown): Promise<unknown> {
    let response: Response;
    try {
      response = await doFetch(`${base}/api/invoke`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token ?? ''}` },
        body: JSON.stringify({ command, args }),
      });
    } catch {
      tell(false);
      throw new BridgeError('transport', UNREACHABLE);
    }
    // An answer came: the server is there (and when the stream is open or not needed, so are its events).
    if (source === null || source.readyState === Source.OPEN) tell(true);
    if (response.status === 401) throw new BridgeError('unauthorized', NOT_SIGNED_IN);
    let envelope: Envelope;
    try {
      envelope = (await response.json()) as Envelope;
    } catch {
      throw new BridgeError('transport', UNREADABLE);
    }
    if (!envelope.ok) throw new BridgeError(envelope.error.code, envelope.error.message, envelope.error.field, envelope.error);
    return envelope.result;
  }

  return {
    setToken(next) {
      if (next === token) return;
      token = next;
      // The stream carries the token in its URL: one opened with the old token is refused, so it is opened anew.
      if (source || reopenTimer) {
        closeStream();
        if (listenerCount() > 0) openStream();
      }
    },

    async invoke(command, args) {
      // The event stream is open before a command is sent: an event of a change made after the command's answer is
      // then on the stream, not lost before the stream connects (a page's first reads start before its listeners
      // are set up). With no listener, a stream opened for this closes again after it.
      if (!source) openStream();
      try {
        await streamReady();
        return (await send(command, args)) as never;
      } finally {
        if (listenerCount() === 0) closeStream();
      }
    },

    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      // Wrap so the same function subscribed twice gets two independent subscriptions.
      const wrapped: AnyListener = (payload) => listener(payload as never);
      set.add(wrapped);
      openStream();
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        set.delete(wrapped);
        if (listenerCount() === 0) closeStream();
      };
    },
  };
}
