import { describe, expect, it, vi } from 'vitest';
import { EventHub } from './events.ts';

describe('EventHub', () => {
  it('delivers to every subscriber until it unsubscribes, even when another listener throws', () => {
    const hub = new EventHub();
    const seen: unknown[] = [];
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    hub.subscribe(() => {
      throw new Error('broken client');
    });
    const listener = (name: string, payload: unknown) => seen.push([name, payload]);
    const off = hub.subscribe(listener);
    const offSecond = hub.subscribe(listener); // the same function twice: two subscriptions
    hub.emit('sources.changed', { sources: [] });
    expect(seen).toEqual([
      ['sources.changed', { sources: [] }],
      ['sources.changed', { sources: [] }],
    ]);
    off();
    off();
    hub.emit('document.progress', { url: 'http://127.0.0.1:1/', entries: 1, bytes: 2 });
    expect(seen).toHaveLength(3);
    offSecond();
    hub.emit('document.progress', { url: 'http://127.0.0.1:1/', entries: 1, bytes: 2 });
    expect(seen).toHaveLength(3);
    expect(hub.size).toBe(1);
    expect(error).toHaveBeenCalledTimes(3);
    error.mockRestore();
  });
});
