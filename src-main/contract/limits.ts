// The ranges that both the app (Settings, Check Source) and rsdesk accept, and the one phrase each uses to state
// them, so the form, the service's validation and the command line can never disagree about what is allowed.
// No imports: the CLI reads this before it loads anything else.

/** The per-request timeout, in whole seconds (the Settings field, `rsdesk --timeout`). */
export const TIMEOUT_SECONDS = { min: 1, max: 600 } as const;
export const TIMEOUT_RANGE = `a whole number of seconds from ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}`;

/** How many documents one check of a Source reads at most (`check.run`, `rsdesk check --max-documents`). */
export const CHECK_MAX_DOCUMENTS = { min: 1, max: 100_000 } as const;
export const CHECK_MAX_DOCUMENTS_RANGE = `a whole number from ${CHECK_MAX_DOCUMENTS.min} to ${CHECK_MAX_DOCUMENTS.max.toLocaleString('en')}`;

/** A mirror's connections per host and pause between requests (the mirror form, `rsdesk sync --concurrency --delay`). */
export const MIRROR_LIMITS = { concurrency: { min: 1, max: 256 }, delaySeconds: { min: 0, max: 3600 }, syncEveryHours: { min: 0, max: 8760 } } as const;

/**
 * How long a Source may refuse every request of a mirror's run before the run pauses (the mirror setting,
 * `rsdesk sync --pause-after-refusals`), in whole seconds: up to a week; 30 min unless set.
 */
export const REFUSAL_SECONDS = { min: 1, max: 7 * 86_400, default: 1800 } as const;
export const REFUSAL_RANGE = `a whole number of seconds from ${REFUSAL_SECONDS.min} to ${REFUSAL_SECONDS.max.toLocaleString('en')} (a week)`;
