// The mass-delete guard against a Source that serves an empty list, for a mirror of any size.
import { describe, expect, it } from 'vitest';
import type { Applier } from './apply.ts';
import type { MirrorState } from './state.ts';
import { applyToUnlisted } from './unlisted.ts';

describe('applyToUnlisted', () => {
  it('keeps every resource of a large mirror when the Source suddenly lists none, and says so', () => {
    const unlisted = Array.from({ length: 300_000 }, (_, i) => `http://127.0.0.1/r/${i}`);
    const deleted: string[] = [];
    const kept: string[] = [];
    const applier = { deletePolicy: 'delete', keptBack: (uri: string) => void kept.push(uri), delete: (uri: string) => void deleted.push(uri) } as unknown as Applier;
    const state = { get: () => ({ status: 'verified' }) } as unknown as MirrorState;
    const notes: string[] = [];
    // A spread of 300,000 arguments overflowed the stack ("Maximum call stack size exceeded").
    applyToUnlisted(applier, state, unlisted, { listed: 0, onNote: (n) => void notes.push(n) });
    expect(deleted).toEqual([]);
    expect(kept).toHaveLength(300_000);
    expect(notes[0]).toMatch(/^The Source no longer lists 300,000 resources this mirror holds, more than the 0 it lists now: none was deleted/);
  });
});
