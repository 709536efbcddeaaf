// When V8 optimizes the engine's hot code. By default a function is compiled by TurboFan after about 3,000 calls'
// worth of interrupt budget; a mirror run of 10,000 small resources is over in under two seconds, and a third of it
// went by before its per-resource code was optimized. At 1,000 the same runs took 1.61–1.80 s instead of 1.91–2.40 s
// (main thread 1.05–1.17 s of CPU against 1.30–1.57 s) in alternating runs; 500 was no better and 250 worse (more
// compiling). Set once per process, at its start, by its entry points (rsdesk's launcher, the Electron main process):
// V8 reads it each time it works out a function's budget, so functions already loaded are covered too.
import { setFlagsFromString } from 'node:v8';

export const TIERING_FLAGS = '--invocation-count-for-turbofan=1000';

export function tuneTiering(): void {
  setFlagsFromString(TIERING_FLAGS);
}
