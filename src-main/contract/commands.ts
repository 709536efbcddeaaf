// The commands: argument schemas (validated in main before any handler runs) and result types.
import { z } from 'zod';
import type { CommandName } from './names.ts';
import { ENTRY_SORT_KEYS } from './types.ts';
import type {
  AppInfo,
  CheckReport,
  DiscoveryResult,
  DocumentView,
  Entry,
  EntryPage,
  RawDocument,
  SavedSource,
  Settings,
} from './types.ts';

const httpUrl = z
  .string()
  .max(8192)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL');

const none = z.object({}).strict();

export const commandArgs = {
  'app.info': none,
  'sources.list': none,
  'sources.add': z.object({ url: z.string().min(1).max(8192), runId: z.string().min(1).max(100) }).strict(),
  'sources.remove': z.object({ id: z.number().int().positive() }).strict(),
  'discovery.run': z.object({ url: z.string().min(1).max(8192), runId: z.string().min(1).max(100) }).strict(),
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
      bearerToken: z.string().max(4096).nullable().optional(),
      timeoutMs: z.number().int().min(1000).max(600_000).optional(),
    })
    .strict(),
  'shell.openExternal': z.object({ url: httpUrl }).strict(),
  // Checking a whole Source (from any URL of it, like discovery):
  'check.run': z
    .object({ url: z.string().min(1).max(8192), runId: z.string().min(1).max(100), maxDocuments: z.number().int().min(1).max(100_000).optional() })
    .strict(),
  'check.cancel': z.object({ runId: z.string().min(1).max(100) }).strict(),
} satisfies Record<CommandName, z.ZodType>;

export interface CommandResults {
  'app.info': AppInfo;
  'sources.list': SavedSource[];
  'sources.add': { source: SavedSource; discovery: DiscoveryResult };
  'sources.remove': SavedSource[];
  'discovery.run': DiscoveryResult;
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
}

export type CommandArgs<C extends CommandName> = z.input<(typeof commandArgs)[C]>;
export type CommandResult<C extends CommandName> = CommandResults[C];
