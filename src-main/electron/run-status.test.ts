import { describe, expect, it } from 'vitest';
import type { MirrorProgress, MirrorRunEnd } from '../contract/types.ts';
import { noticeFor, RunStatus } from './run-status.ts';

const progress = (path: string, done: number, total: number, totalKnown = true): MirrorProgress => ({
  path,
  kind: 'sync',
  mode: 'baseline',
  dryRun: false,
  phase: 'fetch',
  pausing: false,
  cancelling: false,
  retry: false,
  done,
  total,
  totalKnown,
  bytesDone: 0,
  bytesTotal: 0,
  rate: 0,
  byteRate: 0,
  etaSeconds: null,
  elapsedSeconds: 1,
  created: done,
  updated: 0,
  deleted: 0,
  unchanged: 0,
  skipped: 0,
  failed: 0,
  resources: done,
  latestFailure: null,
});

const end = (patch: Partial<MirrorRunEnd>): MirrorRunEnd => ({
  path: '/m',
  kind: 'sync',
  status: 'completed',
  message: 'Baseline completed: 3 created.',
  summary: { headline: 'Baseline completed', changes: true, rest: '' },
  mode: 'baseline',
  created: 3,
  updated: 0,
  deleted: 0,
  unchanged: 0,
  skipped: 0,
  failed: 0,
  bytes: 10,
  seconds: 120,
  ...patch,
});

describe('RunStatus (taskbar progress)', () => {
  it('adds up every running sync, is indeterminate while a total is unknown, and goes away at the end', () => {
    const s = new RunStatus();
    expect(s.taskbarValue()).toBe(-1);
    s.progress(progress('/a', 10, 40));
    expect(s.taskbarValue()).toBe(0.25);
    s.progress(progress('/b', 30, 60));
    expect(s.taskbarValue()).toBe(0.4);
    s.progress(progress('/b', 30, 60, false));
    expect(s.taskbarValue()).toBeGreaterThan(1);
    s.ended('/b');
    expect(s.taskbarValue()).toBe(0.25);
    s.ended('/a');
    expect(s.taskbarValue()).toBe(-1);
  });
});

describe('noticeFor (system notification)', () => {
  const options = { focused: false, minSeconds: 30, name: 'dataset1' };
  it('says when a long run ends or fails while the window is in the background', () => {
    expect(noticeFor(end({}), options)).toEqual({ title: 'Mirror dataset1: Baseline done', body: 'Baseline completed: 3 created.' });
    expect(noticeFor(end({ status: 'failed', failed: 2, message: 'x' }), options)?.title).toBe('Mirror dataset1: Baseline ended with failures');
    expect(noticeFor(end({ status: 'error', mode: null, message: 'locked' }), options)?.title).toBe('Mirror dataset1: Run could not run');
    expect(noticeFor(end({ kind: 'audit', mode: null, failed: 2 }), options)?.title).toBe('Mirror dataset1: Audit found differences');
  });
  it('stays quiet for short runs, in front of the window, and for a pause or cancel', () => {
    expect(noticeFor(end({ seconds: 5 }), options)).toBeNull();
    expect(noticeFor(end({}), { ...options, focused: true })).toBeNull();
    expect(noticeFor(end({ status: 'paused' }), options)).toBeNull();
    expect(noticeFor(end({ status: 'cancelled' }), options)).toBeNull();
  });
});
