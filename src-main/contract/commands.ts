// The commands: argument schemas (validated in main before any handler runs) and result types.
import { z } from 'zod';
import type { CommandName } from './names.ts';
import { ENTRY_SORT_KEYS } from './types.ts';
import type {
  AddSourceResult,
  AppInfo,
  CheckReport,
  LiveEvent,
  LiveStatus,
  SelfTest,
  SubscriptionView,
  DiscoveryResult,
  DocumentView,
  Entry,
  EntryPage,
  RawDocument,
  SavedSource,
  Settings,
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

/** The accepted range, in the words the Settings form uses. */
export const TIMEOUT_SECONDS = { min: 1, max: 600 } as const;
const timeoutMessage = `Timeout must be between ${TIMEOUT_SECONDS.min} and ${TIMEOUT_SECONDS.max} seconds`;

const none = z.object({}).strict();

export const commandArgs = {
  'app.info': none,
  'sources.list': none,
  'sources.add': z.object({ url: startUrl, runId }).strict(),
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
        .nullable()
        .optional(),
      timeoutMs: z
        .number(timeoutMessage)
        .int(timeoutMessage)
        .min(TIMEOUT_SECONDS.min * 1000, timeoutMessage)
        .max(TIMEOUT_SECONDS.max * 1000, timeoutMessage)
        .optional(),
    })
    .strict(),
  'shell.openExternal': z.object({ url: httpUrl }).strict(),
  // Checking a whole Source (from any URL of it, like discovery):
  'check.run': z
    .object({
      url: startUrl,
      runId,
      maxDocuments: z
        .number()
        .int('The most documents to check must be a whole number, from 1 to 100,000')
        .min(1, 'The most documents to check must be from 1 to 100,000')
        .max(100_000, 'The most documents to check must be from 1 to 100,000')
        .optional(),
    })
    .strict(),
  'check.cancel': z.object({ runId }).strict(),
  'live.status': none,
  'live.settings.set': z
    .object({
      host: z.string().trim().min(1, 'Enter the address the callback server listens on').max(255, 'The address is too long'),
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
      folder: z.string('Choose the mirror folder').trim().min(1, 'Choose the mirror folder').max(4096, 'The folder path is too long'),
      leaseSeconds: z.number().int('The lease must be a whole number of seconds').min(60, 'The lease must be at least 60 seconds').max(31_536_000, 'The lease must be at most a year').optional(),
    })
    .strict(),
  'live.unsubscribe': z.object({ folder: z.string().min(1).max(4096), id: z.number().int().positive() }).strict(),
  'live.recent': none,
} satisfies Record<CommandName, z.ZodType>;

export interface CommandResults {
  'app.info': AppInfo;
  'sources.list': SavedSource[];
  'sources.add': AddSourceResult;
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
