// The numbered record of the service's events that the SSE adapter keeps, so a client that lost its connection gets
// what it missed when it comes back (its `Last-Event-ID`), or, when that cannot be given whole, is told so.
import { randomBytes } from 'node:crypto';
import type { EventName } from '../contract/names.ts';

/** The most events kept for replay; older ones fall off. */
export const REPLAY_EVENTS = 2_000;
/** The most bytes of events kept for replay (their JSON); older ones fall off. */
export const REPLAY_BYTES = 4 * 1024 * 1024;

export interface NumberedEvent {
  /** `EPOCH.SEQ`: EPOCH is new at every start of the server, SEQ counts from 1. */
  id: string;
  seq: number;
  name: EventName;
  /** The payload as JSON, written once for every client. */
  data: string;
}

/** What a client that comes back with a last event id gets. */
export type Resume =
  | { kind: 'replay'; events: NumberedEvent[] }
  /** Its events cannot all be given again: it must read everything again. Plain words for a person in `message`. */
  | { kind: 'missed'; reason: 'overrun' | 'restart'; message: string };

export interface EventReplayOptions {
  maxEvents?: number;
  maxBytes?: number;
  /** Fixed in tests; random otherwise. */
  epoch?: string;
}

function dropped(n: number): string {
  return n === 1 ? '1 event was dropped' : `${n} events were dropped`;
}

export class EventReplay {
  readonly epoch: string;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #events: NumberedEvent[] = [];
  /** Where the kept events start in #events (a queue without shifting on every push). */
  #head = 0;
  #bytes = 0;
  #seq = 0;

  constructor(options: EventReplayOptions = {}) {
    this.epoch = options.epoch ?? randomBytes(6).toString('hex');
    this.#maxEvents = options.maxEvents ?? REPLAY_EVENTS;
    this.#maxBytes = options.maxBytes ?? REPLAY_BYTES;
  }

  /** The id of the newest event, or of none yet (`EPOCH.0`). */
  get lastId(): string {
    return `${this.epoch}.${this.#seq}`;
  }

  get size(): number {
    return this.#events.length - this.#head;
  }

  record(name: EventName, payload: unknown): NumberedEvent {
    const seq = ++this.#seq;
    const event: NumberedEvent = { id: `${this.epoch}.${seq}`, seq, name, data: JSON.stringify(payload) };
    this.#events.push(event);
    this.#bytes += event.data.length;
    while (this.size > this.#maxEvents || (this.#bytes > this.#maxBytes && this.size > 1)) {
      this.#bytes -= this.#events[this.#head]!.data.length;
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  /** The events after `lastId` (an id this server gave), or why they cannot be given. */
  resume(lastId: string): Resume {
    const match = /^([0-9a-f]+)\.(\d{1,15})$/.exec(lastId.trim());
    const seq = match ? Number(match[2]) : NaN;
    if (!match || match[1] !== this.epoch || seq > this.#seq) {
      return { kind: 'missed', reason: 'restart', message: 'The app server was restarted: everything shown is read again.' };
    }
    const oldest = this.size > 0 ? this.#events[this.#head]!.seq : this.#seq + 1;
    if (seq + 1 < oldest) {
      return {
        kind: 'missed',
        reason: 'overrun',
        message: `More happened while the page was disconnected than the app server keeps (${dropped(oldest - seq - 1)}): everything shown is read again.`,
      };
    }
    return { kind: 'replay', events: this.#events.slice(this.#head + (seq + 1 - oldest)) };
  }
}
