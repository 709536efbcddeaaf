// The commands: argument schemas (validated in main before any handler runs) and result types.
import { z } from 'zod';
import { basicPasswordProblem, CONTROL, tokenProblem } from './credentials.ts';
import { FORBIDDEN_HEADERS, HEADER_LIMITS, HEADER_NAME, headerValueProblem, MIRROR_OWN_HEADERS } from './headers.ts';
import { CHECK_MAX_DOCUMENTS, CHECK_MAX_DOCUMENTS_RANGE, MIRROR_LIMITS, REFUSAL_RANGE, REFUSAL_SECONDS, TIMEOUT_RANGE, TIMEOUT_SECONDS } from './limits.ts';
import type { CommandName } from './names.ts';
import { DELETE_POLICIES, ENTRY_SORT_KEYS, MIRROR_MODES } from './types.ts';
import { MINUTES_PER_DAY } from './schedule.ts';
import type {
  AddSourceResult,
  AppInfo,
  AuditView,
  CheckReport,
  LiveEvent,
  LiveStatus,
  SelfTest,
  SubscriptionView,
  DiscoveryResult,
  DocumentView,
  Entry,
  EntryPage,
  MirrorDetail,
  MirrorRun,
  MirrorSummary,
  RawDocument,
  RunFailures,
  SavedSource,
  Settings,
  SignInResult,
  SignInShown,
} from './types.ts';

// Messages here are what a person reads (dispatch shows them as they are): plain sentences, no field names.
// Arguments only a programming error can get wrong keep the generic wording dispatch gives them.

const httpUrl = z
  .string()
  .max(8192, 'The URL is too long (at most 8,192 characters)')
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'Only http and https URLs can be opened');

/** What a person pastes: a URL or a bare host name (the service normalizes it and says what is wrong with it). */
const startUrl = z
  .string('Enter a URL or a host name')
  .trim()
  .min(1, 'Enter a URL or a host name')
  .max(8192, 'The URL is too long (at most 8,192 characters)');
const runId = z.string().min(1).max(100);

export { TIMEOUT_SECONDS } from './limits.ts';
const timeoutMessage = `Timeout must be ${TIMEOUT_RANGE}`;
const maxDocumentsMessage = `The most documents to check must be ${CHECK_MAX_DOCUMENTS_RANGE}`;

const none = z.object({}).strict();

/** A mirror's folder: an absolute path (the service says so when it is not). */
const folder = z
  .string('Choose a folder for the mirror')
  .trim()
  .min(1, 'Choose a folder for the mirror')
  .max(4096, 'The folder path is too long (at most 4,096 characters)')
  .refine((s) => !s.includes('\0'), 'The folder path contains a NUL character');
const mirrorPath = z.object({ path: folder }).strict();
/** The folder a live subscription feeds (a NUL in it reached the file system, which threw an internal error). */
const liveFolder = z
  .string('Choose the mirror folder')
  .trim()
  .min(1, 'Choose the mirror folder')
  .max(4096, 'The folder path is too long')
  .refine((s) => !s.includes('\0'), 'The folder path contains a NUL character');

/** RFC 7617: the user name may not hold a colon; neither part a control character (it would break the header). */
const basicUser = z
  .string('The user name must be text')
  .min(1, 'Enter the user name')
  .max(256, 'The user name is too long (at most 256 characters)')
  .refine((s) => !s.includes(':'), 'A user name cannot contain a colon (HTTP basic authentication does not allow one)')
  .refine((s) => !CONTROL.test(s), 'The user name contains a line break or another control character');
const basicPassword = z
  .string('The password must be text')
  .min(1, 'Enter the password')
  .max(1024, 'The password is too long (at most 1,024 characters)')
  .refine((s) => basicPasswordProblem(s) === null, 'The password contains a line break or another control character');

/** RFC 6750's token characters and more, but never a space or a control character (it would break the header). */
const bearerToken = z
  .string('The token must be text')
  .min(1, 'Enter the token')
  .max(4096, 'The token is too long (at most 4,096 characters)')
  .refine((s) => tokenProblem(s) === null, { error: (issue) => tokenProblem(String(issue.input)) ?? undefined });

/** A sign-in for a Source: a user name and password (HTTP basic), or a bearer token, never both. */
const signInFields = {
  user: basicUser.optional(),
  password: basicPassword.optional(),
  token: bearerToken.optional(),
};
type SignInFields = { user?: string; password?: string; token?: string };
const signInRules = <T extends z.ZodType<SignInFields>>(schema: T) =>
  schema
    .refine((a) => a.token === undefined || (a.user === undefined && a.password === undefined), {
      message: 'Give either a user name and password or a token, not both',
      path: ['token'],
    })
    .refine((a) => a.password === undefined || a.user !== undefined, { message: 'Enter the user name', path: ['user'] })
    .refine((a) => a.user === undefined || a.password !== undefined, { message: 'Enter the password', path: ['password'] });
const signIn = signInRules(z.object(signInFields).strict()).refine((a) => a.user !== undefined || a.token !== undefined, {
  message: 'Enter a user name and password, or a token',
  path: ['user'],
});

/** Extra request headers of a mirror, as name/value rows. */
const headerRow = z
  .object({
    name: z
      .string('A header name must be text')
      .trim()
      .min(1, 'Enter the header name')
      .max(HEADER_LIMITS.name, `A header name is too long (at most ${HEADER_LIMITS.name} characters)`)
      .refine((s) => HEADER_NAME.test(s), 'A header name is letters, digits and ! # $ % & \' * + - . ^ _ ` | ~ only (no spaces or colons)')
      .refine((s) => !FORBIDDEN_HEADERS.has(s.toLowerCase()), {
        // The name is checked to be a plain token first, so quoting it here is safe.
        error: (issue) => {
          const name = String(issue.input).toLowerCase();
          if (name === 'authorization') return 'The Authorization header cannot be set as an extra header: give a user name and password or a token instead';
          return MIRROR_OWN_HEADERS.has(name) ? `The ${name} header cannot be set: the mirror sets it itself, request by request` : `The ${name} header cannot be set: the connection itself decides it`;
        },
      }),
    value: z
      .string('A header value must be text')
      .max(HEADER_LIMITS.value, `A header value is too long (at most ${HEADER_LIMITS.value.toLocaleString('en')} characters)`)
      .refine((s) => headerValueProblem(s) === null, { error: (issue) => `A header value ${headerValueProblem(String(issue.input))}` }),
  })
  .strict();

/** The range the mirror form offers, in its words. */
// The same in the app and in rsdesk (the app once allowed fewer: 64 connections, a minute's pause).
export { MIRROR_LIMITS };
const concurrencyMessage = `Connections must be a whole number from ${MIRROR_LIMITS.concurrency.min} to ${MIRROR_LIMITS.concurrency.max}`;
const delayMessage = `The pause between requests must be from ${MIRROR_LIMITS.delaySeconds.min} to ${MIRROR_LIMITS.delaySeconds.max} seconds`;
const scheduleMessage = `A scheduled sync must be every whole number of hours up to ${MIRROR_LIMITS.syncEveryHours.max.toLocaleString('en')} (a year), or 0 for none`;
const timeOfDayMessage = 'A time of day for scheduled syncs must be a whole number of minutes after midnight, from 0 to 1,439 (23:59), or none';
const refusalMessage = `The pause after refusals must be ${REFUSAL_RANGE}`;
/** A whole number within `range`, every way it can be wrong said by `message`. */
const wholeIn = (range: { min: number; max: number }, message: string) => z.number(message).int(message).min(range.min, message).max(range.max, message);
const mirrorOptions = {
  deletePolicy: z.enum(DELETE_POLICIES, 'Choose what happens to files the Source deletes: keep, delete or quarantine').optional(),
  concurrency: wholeIn(MIRROR_LIMITS.concurrency, concurrencyMessage).optional(),
  delaySeconds: z.number(delayMessage).min(MIRROR_LIMITS.delaySeconds.min, delayMessage).max(MIRROR_LIMITS.delaySeconds.max, delayMessage).optional(),
  syncEveryHours: wholeIn(MIRROR_LIMITS.syncEveryHours, scheduleMessage).optional(),
  syncAtMinute: wholeIn({ min: 0, max: MINUTES_PER_DAY - 1 }, timeOfDayMessage).nullable().optional(),
};

export const commandArgs = {
  'app.info': none,
  'sources.list': none,
  /** signIn: credentials for the Source's origin, kept (sealed) once the Source accepts them, before discovery. */
  'sources.add': z.object({ url: startUrl, runId, signIn: signIn.optional() }).strict(),
  /**
   * Credentials for the origin of `url` (a document that answered 401 or 403, or the Source being added): checked by
   * asking `url` with them; kept sealed only when the Source does not refuse them.
   */
  'sources.signIn': signInRules(z.object({ url: startUrl, ...signInFields }).strict()).refine((a) => a.user !== undefined || a.token !== undefined, {
    message: 'Enter a user name and password, or a token',
    path: ['user'],
  }),
  'sources.signIns': none,
  /** Forgets the credentials kept for `url`'s origin. */
  'sources.signOut': z.object({ url: startUrl }).strict(),
  'sources.remove': z.object({ id: z.number().int().positive() }).strict(),
  'sources.restore': z.object({ id: z.number().int().positive() }).strict(),
  'discovery.run': z.object({ url: startUrl, runId }).strict(),
  'discovery.cancel': z.object({ runId }).strict(),
  'documents.summary': z.object({ url: httpUrl, refresh: z.boolean().optional() }).strict(),
  'documents.entries': z
    .object({
      url: httpUrl,
      offset: z.number().int().min(0),
      limit: z.number().int().min(1).max(5000),
      uri: z.string().max(2048).optional(),
      change: z.enum(['created', 'updated', 'deleted']).optional(),
      sort: z.enum(ENTRY_SORT_KEYS).optional(),
      descending: z.boolean().optional(),
    })
    .strict(),
  'documents.entry': z.object({ url: httpUrl, index: z.number().int().min(0) }).strict(),
  'documents.raw': z.object({ url: httpUrl, limit: z.number().int().min(1).max(5_000_000).optional() }).strict(),
  'settings.get': none,
  'settings.set': z
    .object({
      bearerToken: z
        .string('The bearer token must be text')
        .max(4096, 'The bearer token is too long (at most 4,096 characters)')
        // One that cannot be sent would fail every request to its Source, discovery included ('' clears it).
        .refine((s) => s === '' || tokenProblem(s) === null, { error: (issue) => tokenProblem(String(issue.input)) ?? undefined })
        .nullable()
        .optional(),
      // The Source the token is for: any URL of it or its host name (the service keeps its origin); '' or null clears.
      tokenOrigin: z
        .string('The address of the Source the token is for must be text')
        .trim()
        .max(8192, 'The address of the Source the token is for is too long (at most 8,192 characters)')
        .nullable()
        .optional(),
      timeoutMs: z
        .number(timeoutMessage)
        .int(timeoutMessage)
        // Whole seconds, as rsdesk --timeout takes them.
        .multipleOf(1000, timeoutMessage)
        .min(TIMEOUT_SECONDS.min * 1000, timeoutMessage)
        .max(TIMEOUT_SECONDS.max * 1000, timeoutMessage)
        .optional(),
    })
    .strict()
    // A token is sent to the one Source it is given for, never to every host the app reaches (an up link, a redirect,
    // a link followed in the browser): a token without it would be kept and sent nowhere.
    .refine((v) => !v.bearerToken || !!v.tokenOrigin, {
      path: ['tokenOrigin'],
      // What is wrong with the token itself is said first.
      when: (payload) => payload.issues.length === 0,
      message: 'Say which Source the token is for: give its address (for example https://example.org). The token is sent there and nowhere else.',
    }),
  'shell.openExternal': z.object({ url: httpUrl }).strict(),
  // Checking a whole Source (from any URL of it, like discovery):
  'check.run': z
    .object({
      url: startUrl,
      runId,
      maxDocuments: z
        .number(maxDocumentsMessage)
        .int(maxDocumentsMessage)
        .min(CHECK_MAX_DOCUMENTS.min, maxDocumentsMessage)
        .max(CHECK_MAX_DOCUMENTS.max, maxDocumentsMessage)
        .optional(),
    })
    .strict(),
  'check.cancel': z.object({ runId }).strict(),
  'mirrors.list': none,
  'mirrors.get': mirrorPath,
  'mirrors.create': z
    .object({
      /** A Capability List, Resource List or Change List (or anything discovery accepts); absent: the folder is a mirror already. */
      url: httpUrl.optional(),
      path: folder,
      capabilityListUrl: httpUrl.optional(),
      ...mirrorOptions,
      /** `PREFIX=DIR`: URIs under PREFIX go under DIR of the folder. */
      maps: z.array(z.string().max(8192)).max(100, 'At most 100 folder mappings').optional(),
      allowHosts: z.array(z.string().max(255)).max(100, 'At most 100 other hosts').optional(),
      /** HTTP basic credentials the Source asks for: sent from the first request on, to its origin only. */
      user: basicUser.optional(),
      password: basicPassword.optional(),
    })
    .strict()
    .refine((a) => a.password === undefined || a.user !== undefined, { message: 'Enter the user name', path: ['user'] })
    .refine((a) => a.user === undefined || a.password !== undefined, { message: 'Enter the password', path: ['password'] }),
  'mirrors.update': z
    .object({
      path: folder,
      ...mirrorOptions,
      /** Kept in the mirror's folder (not with the app's options); null: the default again. */
      pauseAfterRefusalsSeconds: wholeIn(REFUSAL_SECONDS, refusalMessage).nullable().optional(),
    })
    .strict(),
  /** user and password: the mirror's own basic credentials; both null: it has none of its own any more. */
  'mirrors.setCredentials': z
    .object({ path: folder, user: basicUser.nullable(), password: basicPassword.nullable() })
    .strict()
    .refine((a) => a.password === null || a.user !== null, { message: 'Enter the user name', path: ['user'] })
    .refine((a) => a.user === null || a.password !== null, { message: 'Enter the password', path: ['password'] }),
  /** A bearer token of the mirror's own (sealed like a password; Settings' token no longer replaces it); null: none of its own. */
  'mirrors.setToken': z.object({ path: folder, token: bearerToken.nullable() }).strict(),
  /** The mirror's extra request headers, all of them (an empty list: none), sent to its Source's origin only. */
  'mirrors.setHeaders': z
    .object({
      path: folder,
      headers: z
        .array(headerRow, 'Give the headers as a list of names and values')
        .max(HEADER_LIMITS.count, `At most ${HEADER_LIMITS.count} extra headers`)
        .refine((rows) => new Set(rows.map((r) => r.name.trim().toLowerCase())).size === rows.length, 'Each header name may be given once'),
    })
    .strict(),
  'mirrors.forget': mirrorPath,
  'mirrors.chooseFolder': none,
  'mirrors.openFolder': mirrorPath,
  'runs.start': z
    .object({
      path: folder,
      mode: z.enum(MIRROR_MODES, 'The mode must be auto, baseline or incremental').optional(),
      dryRun: z.boolean().optional(),
      /** Let a baseline delete or quarantine more than the Source lists: true, or at most this many (SyncOptions.allowMassDelete). */
      allowMassDelete: z.union([z.boolean(), z.number().int().nonnegative()]).optional(),
    })
    .strict(),
  'runs.pause': mirrorPath,
  'runs.resume': mirrorPath,
  'runs.cancel': mirrorPath,
  'runs.list': mirrorPath,
  'runs.failures': z.object({ path: folder, runId: z.number().int().positive() }).strict(),
  /** Every failure of the mirror that still stands, whatever run it is of (a live-fed mirror's are spread over many). */
  'runs.retryStanding': mirrorPath,
  'runs.retry': z
    .object({
      path: folder,
      runId: z.number('Choose the run whose failures are retried').int().positive('Choose the run whose failures are retried'),
      uris: z
        .array(z.string().min(1, 'A resource to retry has an empty URI').max(8192, 'A resource URI is too long (at most 8,192 characters)'), 'Give the resources to retry as a list of URIs')
        .min(1, 'Choose at least one resource to retry')
        .max(10_000, 'At most 10,000 resources can be retried at once')
        .optional(),
    })
    .strict(),
  'audit.start': z.object({ path: folder, rehash: z.boolean().optional() }).strict(),
  'audit.report': mirrorPath,
  'audit.exportCancel': mirrorPath,
  'audit.export': z
    .object({
      path: folder,
      runId: z.number('Choose the audit report to export').int().positive('Choose the audit report to export'),
      format: z.enum(['json', 'csv'], 'Choose JSON or CSV'),
      /** The file to write; absent in the desktop app, where main asks with the system's save dialog. */
      file: z
        .string('Give the full path of the file to write')
        .trim()
        .min(1, 'Give the full path of the file to write')
        .max(4096, 'The file path is too long (at most 4,096 characters)')
        .refine((s) => !s.includes('\0'), 'The file path contains a NUL character')
        .optional(),
      /** Only the rows the table's filter shows; absent or null: every row of the report. */
      filter: z
        .object({
          status: z.enum(['all', 'missing', 'changed', 'unverifiable', 'extra', 'kept'], 'Choose which kind of difference to export'),
          text: z.string().max(1000, 'The filter text is too long (at most 1,000 characters)'),
        })
        .strict()
        .nullable()
        .optional(),
    })
    .strict(),
  'live.status': none,
  'live.settings.set': z
    .object({
      host: z
        .string()
        .trim()
        .min(1, 'Enter the address the callback server listens on')
        .max(255, 'The address is too long')
        // A NUL was kept in the settings, and the server's error then quoted Node ("The argument 'hostname' must be…").
        .refine((s) => !/[\s\u0000-\u001f\u007f]/.test(s), 'The address must be a host name or an IP address, without spaces or control characters'),
      port: z.number('The port must be a number from 1 to 65535').int('The port must be a whole number').min(1, 'The port must be from 1 to 65535').max(65535, 'The port must be from 1 to 65535'),
      publicUrl: z
        .string()
        .trim()
        .max(2048, 'The public callback URL is too long')
        .refine((s) => {
          try {
            const u = new URL(s);
            return u.protocol === 'http:' || u.protocol === 'https:';
          } catch {
            return false;
          }
        }, 'The public callback URL must be an http or https URL')
        .nullable(),
    })
    .strict(),
  'live.selftest': none,
  'live.subscriptions': none,
  'live.subscribe': z
    .object({
      topic: httpUrl,
      hub: httpUrl,
      folder: liveFolder,
      leaseSeconds: z.number().int('The lease must be a whole number of seconds').min(60, 'The lease must be at least 60 seconds').max(31_536_000, 'The lease must be at most a year').optional(),
    })
    .strict(),
  'live.unsubscribe': z.object({ folder: liveFolder, id: z.number().int().positive() }).strict(),
  'live.recent': none,
} satisfies Record<CommandName, z.ZodType>;

export interface CommandResults {
  'app.info': AppInfo;
  'sources.list': SavedSource[];
  'sources.add': AddSourceResult;
  'sources.signIn': SignInResult;
  'sources.signIns': SignInShown[];
  /** What was kept for that origin before (null: nothing). */
  'sources.signOut': { origin: string; forgotten: SignInShown | null };
  'sources.remove': SavedSource[];
  /** The Source as it was before the remove, and the list with it back. */
  'sources.restore': { source: SavedSource; sources: SavedSource[] };
  'discovery.run': DiscoveryResult;
  /** cancelled: false when no discovery with that runId was running (it may have just finished). */
  'discovery.cancel': { cancelled: boolean };
  'documents.summary': DocumentView;
  'documents.entries': EntryPage;
  'documents.entry': Entry;
  'documents.raw': RawDocument;
  'settings.get': Settings;
  'settings.set': Settings;
  'shell.openExternal': { opened: boolean };
  'check.run': CheckReport;
  /** cancelled: false when no check with that runId was running. */
  'check.cancel': { cancelled: boolean };
  'mirrors.list': MirrorSummary[];
  'mirrors.get': MirrorDetail;
  /** The new mirror (or the folder's own, when it is a mirror already). */
  'mirrors.create': MirrorSummary;
  'mirrors.update': MirrorSummary;
  'mirrors.setCredentials': MirrorDetail;
  'mirrors.setToken': MirrorDetail;
  'mirrors.setHeaders': MirrorDetail;
  'mirrors.forget': MirrorSummary[];
  /** supported: false in a browser (the page asks for a path instead); path: null when the person cancelled. */
  'mirrors.chooseFolder': { supported: boolean; path: string | null };
  /** opened: false in a browser, which cannot open local folders. */
  'mirrors.openFolder': { opened: boolean };
  /** Returns at once (status running); progress and the end arrive as events. */
  'runs.start': MirrorSummary;
  /** paused: false when no sync of that mirror was running. */
  'runs.pause': { paused: boolean };
  'runs.resume': MirrorSummary;
  'runs.cancel': { cancelled: boolean };
  /** Newest first. */
  'runs.list': MirrorRun[];
  'runs.failures': RunFailures;
  'runs.retry': MirrorSummary;
  /** Returns at once (status running), as runs.retry: every failure still standing, whatever run it is of. */
  'runs.retryStanding': MirrorSummary;
  /** Resolves when the audit is done (audit.ended says so too). */
  'audit.start': AuditView;
  /** The last audit of this mirror, kept in its state (after a restart too, and after `rsdesk audit`), or null. */
  'audit.report': AuditView | null;
  /** Resolves when the file is whole; file: null when the person closed the save dialog without choosing. */
  'audit.export': { file: string | null; rows: number };
  /** false when no export of this mirror was under way (it had just ended). */
  'audit.exportCancel': { cancelled: boolean };
  'live.status': LiveStatus;
  'live.settings.set': LiveStatus;
  'live.selftest': SelfTest;
  'live.subscriptions': SubscriptionView[];
  'live.subscribe': SubscriptionView;
  'live.unsubscribe': SubscriptionView;
  /** The last live events, oldest first. */
  'live.recent': LiveEvent[];
}

export type CommandArgs<C extends CommandName> = z.input<(typeof commandArgs)[C]>;
export type CommandResult<C extends CommandName> = CommandResults[C];
