import { describe, expect, it } from 'vitest';
import type { MirrorRunEnd, RunEndSummary } from '../../src-main/contract/types.ts';
import { runEndWords } from './run-end.ts';

const end = (summary: RunEndSummary, counts: Partial<MirrorRunEnd> = {}): MirrorRunEnd => ({
  path: '/m',
  kind: 'sync',
  status: 'completed',
  // Main's wording, which the sentence must not depend on: anything here.
  message: 'Words main may change at any time: 1 created, 2 updated. More words; and more.',
  summary,
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
  it('says a completed run in one sentence, naming only what changed, from the counts', () => {
    expect(runEndWords(end({ headline: 'Baseline completed', changes: true, rest: '' }, { created: 40 }))).toEqual({
      sentence: 'Baseline completed: 40 created.',
      rest: '',
    });
    expect(runEndWords(end({ headline: 'Incremental sync completed', changes: true, rest: '' }, { updated: 2, deleted: 1, unchanged: 5, skipped: 1 })).sentence).toBe(
      'Incremental sync completed: 2 updated and 1 deleted.',
    );
    expect(runEndWords(end({ headline: 'Incremental sync completed', changes: true, rest: '' }, { created: 1_200, updated: 3, deleted: 4 })).sentence).toBe(
      'Incremental sync completed: 1,200 created, 3 updated and 4 deleted.',
    );
    expect(runEndWords(end({ headline: 'Incremental sync completed', changes: true, rest: '' })).sentence).toBe('Incremental sync completed: nothing changed.');
  });

  it('keeps what main says besides its headline, for the screen', () => {
    const rest = '10 resources the Source no longer lists were kept, as this mirror keeps what the Source deletes (the Options tab changes that).';
    expect(runEndWords(end({ headline: 'Baseline completed', changes: true, rest }, { unchanged: 12 }))).toEqual({ sentence: 'Baseline completed: nothing changed.', rest });
    expect(runEndWords(end({ headline: 'Baseline ended with 2 failures', changes: false, rest: 'Retry fetches what failed again.' }, { status: 'failed', created: 38 }))).toEqual({
      sentence: 'Baseline ended with 2 failures.',
      rest: 'Retry fetches what failed again.',
    });
  });

  it('says a pause, a cancel, an audit or an error by its headline alone', () => {
    expect(runEndWords(end({ headline: 'Paused after 12 resources', changes: false, rest: 'Resume takes it up where it stopped.' }, { status: 'paused', created: 12 }))).toEqual({
      sentence: 'Paused after 12 resources.',
      rest: 'Resume takes it up where it stopped.',
    });
    expect(runEndWords(end({ headline: 'Not in sync: 2 differences', changes: false, rest: '' }, { kind: 'audit', failed: 2 }))).toEqual({ sentence: 'Not in sync: 2 differences.', rest: '' });
    expect(runEndWords(end({ headline: 'Could not read http://h/list.xml: 500 Internal Server Error', changes: false, rest: '' }, { status: 'error' })).sentence).toBe(
      'Could not read http://h/list.xml: 500 Internal Server Error.',
    );
  });
});
