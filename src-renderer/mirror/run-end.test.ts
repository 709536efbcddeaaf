import { describe, expect, it } from 'vitest';
import type { MirrorRunEnd } from '../../src-main/contract/types.ts';
import { runEndWords } from './run-end.ts';

const end = (message: string, counts: Partial<MirrorRunEnd> = {}): MirrorRunEnd => ({
  path: '/m',
  kind: 'sync',
  status: 'completed',
  message,
  mode: 'baseline',
  created: 0,
  updated: 0,
  deleted: 0,
  unchanged: 0,
  skipped: 0,
  failed: 0,
  bytes: 0,
  seconds: 1,
  ...counts,
});

describe('runEndWords', () => {
  it('says a completed run in one sentence, naming only what changed', () => {
    expect(runEndWords(end('Baseline completed: 40 created, 0 updated, 0 deleted, 0 unchanged.', { created: 40 }))).toEqual({
      sentence: 'Baseline completed: 40 created.',
      rest: '',
    });
    expect(runEndWords(end('Incremental sync completed: 0 created, 2 updated, 1 deleted, 5 unchanged, 1 skipped.', { updated: 2, deleted: 1, unchanged: 5 })).sentence).toBe(
      'Incremental sync completed: 2 updated and 1 deleted.',
    );
    expect(runEndWords(end('Incremental sync completed: 0 created, 0 updated, 0 deleted, 0 unchanged.')).sentence).toBe('Incremental sync completed: nothing changed.');
  });

  it('keeps what the message says besides its counts, for the screen', () => {
    const kept = end(
      'Baseline completed: 0 created, 0 updated, 0 deleted, 12 unchanged. 10 resources the Source no longer lists were kept, as this mirror keeps what the Source deletes (the Options tab changes that).',
      { unchanged: 12 },
    );
    expect(runEndWords(kept)).toEqual({
      sentence: 'Baseline completed: nothing changed.',
      rest: '10 resources the Source no longer lists were kept, as this mirror keeps what the Source deletes (the Options tab changes that).',
    });
    expect(runEndWords(end('Baseline ended with 2 failures: 38 created, 0 updated, 0 deleted, 0 unchanged. Retry fetches what failed again.', { status: 'failed' }))).toEqual({
      sentence: 'Baseline ended with 2 failures.',
      rest: 'Retry fetches what failed again.',
    });
    expect(runEndWords(end('Retry of 2 resources of run 1: 2 failed again; 0 created, 0 updated, 0 deleted, 0 unchanged. The Failures tab says why.', { status: 'failed' }))).toEqual({
      sentence: 'Retry of 2 resources of run 1: 2 failed again.',
      rest: 'The Failures tab says why.',
    });
  });

  it('cuts a pause, a cancel or an error at its first sentence', () => {
    expect(runEndWords(end('Paused after 12 resources; Resume takes it up where it stopped.', { status: 'paused' }))).toEqual({
      sentence: 'Paused after 12 resources.',
      rest: 'Resume takes it up where it stopped.',
    });
    expect(runEndWords(end('Cancelled. What was verified stays; the next run does not fetch it again.', { status: 'cancelled' }))).toEqual({
      sentence: 'Cancelled.',
      rest: 'What was verified stays; the next run does not fetch it again.',
    });
    expect(runEndWords(end('Not in sync: 2 differences.', { kind: 'audit' }))).toEqual({ sentence: 'Not in sync: 2 differences.', rest: '' });
    expect(runEndWords(end('Could not read http://h/list.xml: 500 Internal Server Error', { status: 'error' })).sentence).toBe(
      'Could not read http://h/list.xml: 500 Internal Server Error.',
    );
  });
});
