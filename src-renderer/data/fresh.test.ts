// The two ways an event enters the cache, against react-query itself: an answer made before the event and arriving
// after it never wins, whether the query had data or not.
import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { putFromEvent, readAgain } from './fresh.ts';

/** A query whose reads are answered by hand, in any order; `reads` counts them. */
function heldQuery(client: QueryClient, key: Array<string | number>, initial?: string) {
  const answers: Array<(value: string) => void> = [];
  if (initial !== undefined) client.setQueryData(key, initial);
  const observer = new QueryObserver(client, { queryKey: key, queryFn: () => new Promise<string>((resolve) => answers.push(resolve)), staleTime: Infinity });
  const shown: Array<string | undefined> = [];
  const off = observer.subscribe((result) => shown.push(result.data));
  return { answers, shown, off, observer };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('putFromEvent', () => {
  for (const initial of [undefined, 'before']) {
    it(`keeps the event over a read answered before it (${initial === undefined ? 'no data yet' : 'with data'})`, async () => {
      const client = new QueryClient();
      const q = heldQuery(client, ['k'], initial);
      if (initial !== undefined) void client.refetchQueries({ queryKey: ['k'] });
      await settle();
      expect(q.answers).toHaveLength(1);
      putFromEvent(client, ['k'], 'event');
      expect(client.getQueryData(['k'])).toBe('event');
      // The old read's answer arrives after the event: dropped. The read started after the event is the one kept.
      q.answers[0]!('old answer');
      await settle();
      expect(client.getQueryData(['k'])).toBe('event');
      expect(q.answers).toHaveLength(2);
      q.answers[1]!('new answer');
      await settle();
      expect(client.getQueryData(['k'])).toBe('new answer');
      expect(q.observer.getCurrentResult().data).toBe('new answer');
      expect(q.shown).not.toContain('old answer');
      q.off();
    });
  }

  it('reads nothing again when no read was under way', async () => {
    const client = new QueryClient();
    const q = heldQuery(client, ['k'], 'before');
    await settle();
    putFromEvent(client, ['k'], 'event');
    await settle();
    expect(q.answers).toHaveLength(0);
    expect(q.observer.getCurrentResult().data).toBe('event');
    q.off();
  });
});

describe('readAgain', () => {
  it('drops a first read under way and starts another, whose answer is kept', async () => {
    const client = new QueryClient();
    const q = heldQuery(client, ['k']);
    await settle();
    expect(q.answers).toHaveLength(1);
    readAgain(client, ['k']);
    await settle();
    expect(q.answers).toHaveLength(2);
    q.answers[0]!('old answer');
    await settle();
    expect(client.getQueryData(['k'])).toBeUndefined();
    q.answers[1]!('new answer');
    await settle();
    expect(q.observer.getCurrentResult().data).toBe('new answer');
    expect(q.shown).not.toContain('old answer');
    q.off();
  });

  it('without a key, reads every shown query again', async () => {
    const client = new QueryClient();
    const a = heldQuery(client, ['a'], 'a0');
    const b = heldQuery(client, ['b', 1], 'b0');
    readAgain(client);
    await settle();
    expect(a.answers).toHaveLength(1);
    expect(b.answers).toHaveLength(1);
    a.answers[0]!('a1');
    b.answers[0]!('b1');
    await settle();
    expect([client.getQueryData(['a']), client.getQueryData(['b', 1])]).toEqual(['a1', 'b1']);
    a.off();
    b.off();
  });
});
