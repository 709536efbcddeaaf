import { describe, expect, it } from 'vitest';
import { EventReplay } from './event-replay.ts';

const names = (r: ReturnType<EventReplay['resume']>) => (r.kind === 'replay' ? r.events.map((e) => e.data) : r.reason);

describe('EventReplay', () => {
  it('numbers events EPOCH.SEQ and gives those after a last id, in order', () => {
    const replay = new EventReplay({ epoch: 'abc' });
    expect(replay.lastId).toBe('abc.0');
    for (let i = 1; i <= 5; i++) replay.record('document.progress', { n: i });
    expect(replay.lastId).toBe('abc.5');
    expect(names(replay.resume('abc.2'))).toEqual(['{"n":3}', '{"n":4}', '{"n":5}']);
    expect(names(replay.resume('abc.5'))).toEqual([]);
    expect(names(replay.resume('abc.0'))).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":5}']);
    const replayed = replay.resume('abc.4');
    expect(replayed.kind === 'replay' && replayed.events[0]).toMatchObject({ id: 'abc.5', seq: 5, name: 'document.progress' });
  });

  it('says the gap cannot be replayed once the events after the last id fell off (by count)', () => {
    const replay = new EventReplay({ epoch: 'abc', maxEvents: 3 });
    for (let i = 1; i <= 10; i++) replay.record('document.progress', { n: i });
    expect(replay.size).toBe(3);
    // 8, 9, 10 are kept: from 7 on it can be given whole, not from 6.
    expect(names(replay.resume('abc.7'))).toEqual(['{"n":8}', '{"n":9}', '{"n":10}']);
    const missed = replay.resume('abc.6');
    expect(missed).toMatchObject({ kind: 'missed', reason: 'overrun' });
    expect(missed.kind === 'missed' && missed.message).toBe(
      'More happened while the page was disconnected than the app server keeps (1 event was dropped): everything shown is read again.',
    );
  });

  it('keeps at most maxBytes of events, and always the newest one', () => {
    const replay = new EventReplay({ epoch: 'abc', maxBytes: 100 });
    for (let i = 1; i <= 10; i++) replay.record('document.progress', { text: 'x'.repeat(30) });
    expect(replay.size).toBe(2);
    replay.record('document.progress', { text: 'y'.repeat(500) });
    expect(replay.size).toBe(1);
    expect(replay.resume('abc.10').kind).toBe('replay');
    expect(replay.resume('abc.9').kind).toBe('missed');
  });

  it('keeps working past many events (its queue is compacted)', () => {
    const replay = new EventReplay({ epoch: 'abc', maxEvents: 10 });
    for (let i = 1; i <= 5_000; i++) replay.record('document.progress', { n: i });
    expect(replay.size).toBe(10);
    expect(names(replay.resume('abc.4998'))).toEqual(['{"n":4999}', '{"n":5000}']);
  });

  it('tells a client of another start of the server (or a made-up id) to read everything again', () => {
    const replay = new EventReplay({ epoch: 'abc' });
    replay.record('document.progress', { n: 1 });
    for (const id of ['def.1', 'abc.2', 'abc', 'garbage', '', 'abc.-1', 'abc.1e3']) {
      expect(replay.resume(id), id).toMatchObject({ kind: 'missed', reason: 'restart', message: 'The app server was restarted: everything shown is read again.' });
    }
    expect(new EventReplay().epoch).not.toBe(new EventReplay().epoch);
  });
});
