// Lists or dumps? With --use-dumps a baseline reads the Resource Dump and an incremental sync the Change Dump, when
// the Capability List offers them and they can be read; otherwise the run uses the lists and says why. A run that was
// interrupted while reading a dump resumes from that dump.
import { clip } from '../clip.ts';
import type { Http } from '../http/client.ts';
import { dumpPackages, type DumpListing } from './package/index.ts';
import type { Binding, RunRecord } from './state.ts';

export interface DumpChoice {
  /** The dump used, or null for the lists. */
  url: string | null;
  listing: DumpListing | null;
}

const NONE: DumpChoice = { url: null, listing: null };

export async function chooseDumps(o: {
  http: Http;
  binding: Binding;
  mode: 'baseline' | 'incremental';
  useDumps: boolean;
  resume: RunRecord | null;
  signal?: AbortSignal;
  onNote?: (note: string) => void;
}): Promise<DumpChoice> {
  const baseline = o.mode === 'baseline';
  const dumpUrl = baseline ? o.binding.resourceDumpUrl : o.binding.changeDumpUrl;
  const listUrl = baseline ? o.binding.resourceListUrl : o.binding.changeListUrl;
  const dumpName = baseline ? 'Resource Dump' : 'Change Dump';
  const listName = baseline ? 'Resource List' : 'Change List';
  const resumingDump = o.resume !== null && dumpUrl !== null && o.resume.listUrl === dumpUrl;
  if (!o.useDumps && !resumingDump) return NONE;
  if (dumpUrl === null) {
    o.onNote?.(`The Source offers no ${dumpName} for this mirror; the ${baseline ? 'baseline' : 'incremental sync'} uses the ${listName} instead.`);
    return NONE;
  }
  try {
    const listing = await dumpPackages(o.http, dumpUrl, { signal: o.signal });
    if (listing.kind !== (baseline ? 'resourcedump' : 'changedump')) throw new Error(`it is not a ${dumpName}`);
    return { url: dumpUrl, listing };
  } catch (err) {
    if (o.signal?.aborted || listUrl === null) throw err;
    o.onNote?.(`The ${dumpName} ${clip(dumpUrl)} could not be read (${(err as Error).message}); the ${baseline ? 'baseline' : 'incremental sync'} uses the ${listName} instead.`);
    return NONE;
  }
}
