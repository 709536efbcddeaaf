// rsdesk's exit codes, in one place: docs/cli.md ("Exit codes") and every command's --help list the same ones.

/** Nothing failed (audit: in sync). */
export const EXIT_OK = 0;
/** Something failed, or a problem was found, or the command could not run. */
export const EXIT_FAILED = 1;
/** The command line is wrong; nothing was done. */
export const EXIT_USAGE = 2;
/**
 * Nothing is wrong with the mirror, but the work is not done and trying later is the remedy: another process holds the
 * folder's lock (an overlapping cron run, the app), or the Source refused every request until the run paused. 75 is
 * EX_TEMPFAIL of sysexits.h, which schedulers and mail transfer agents already read as "try again later"; a wrapper
 * or a systemd unit (SuccessExitStatus=75) can tell it from a failure.
 */
export const EXIT_TRY_LATER = 75;
/** As a shell reports a process a signal ended: 128 + the signal's number (SIGHUP 1, SIGINT 2, SIGTERM 15). */
export const SIGNAL_EXIT = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/** A signal rsdesk stops on cleanly. */
export type StopSignal = keyof typeof SIGNAL_EXIT;

/**
 * Resolves with the first of SIGINT, SIGTERM or SIGHUP to come, then hears no more of them (a second one takes its
 * default). SIGHUP's default (a closed terminal or ssh session) killed rsdesk at once, cutting off what it was doing.
 */
export function firstStopSignal(): Promise<StopSignal> {
  return new Promise((resolve) => {
    const handlers = (Object.keys(SIGNAL_EXIT) as StopSignal[]).map((signal) => [signal, () => stop(signal)] as const);
    const stop = (signal: StopSignal) => {
      for (const [s, h] of handlers) process.off(s, h);
      resolve(signal);
    };
    for (const [s, h] of handlers) process.on(s, h);
  });
}
