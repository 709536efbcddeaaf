// Every failure of a mirror that still stands, whatever run it is of (state.ts standingFailures): what a retry of
// them all takes. On a real mirror state.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MirrorState, stateDirOf } from './state.ts';

describe('the failures still standing', () => {
  it('are the latest failure of each URI no later run mended, named by the run it failed in, audits left out', () => {
    const state = new MirrorState(stateDirOf(mkdtempSync(join(tmpdir(), 'standing-'))));
    const fail = (runId: number, uri: string) => state.addToRun(runId, { failed: 1 }, [{ uri, reason: 'HTTP 404' }]);
    const baseline = state.startRun('baseline', 'baseline', null).id;
    fail(baseline, 'http://x/a');
    fail(baseline, 'http://x/b');
    const audit = state.startRun('audit', 'audit', null).id;
    fail(audit, 'http://x/z');
    const live = state.startRun('incremental', 'live', null).id;
    fail(live, 'http://x/c');
    // A retry of the baseline's failures: b is mirrored, a fails again.
    const retry = state.startRun('baseline', 'retry', null).id;
    state.recordRetry(retry, baseline, ['http://x/a', 'http://x/b']);
    fail(retry, 'http://x/a');
    state.put({ uri: 'http://x/b', path: 'x/b', length: 1, digests: {}, lastmod: null, etag: null, lastModified: null, type: null, status: 'verified', verifiedAt: new Date().toISOString(), runId: retry });
    expect(state.standingFailures(10)).toEqual({
      total: 2,
      failures: [
        { uri: 'http://x/a', runId: baseline },
        { uri: 'http://x/c', runId: live },
      ],
    });
    expect(state.standingFailures(1)).toEqual({ total: 2, failures: [{ uri: 'http://x/a', runId: baseline }] });
    // Found gone at the Source by a later run: settled too.
    state.settleGone(state.startRun('incremental', 'retry', null).id, 'http://x/c');
    expect(state.standingFailures(10).failures.map((f) => f.uri)).toEqual(['http://x/a']);
    state.close();
  });
});
