// What the list reader found against the spec in the Resource Lists and Change Lists a run read (the reader reports
// a missing `at`, an unknown capability, changes out of order…): before, a sync dropped them, and an archivist whose
// Source is sloppy never learnt why a mirror behaved as it did. Gathered per run, bounded, recorded in the journal
// (state.addRunFindings) and returned with the run's result.
import type { Finding } from '../documents/model.ts';
import type { MirrorState, RunFinding } from './state.ts';

/** Findings kept per run (in its journal and its result); the rest are counted. */
export const MAX_RUN_FINDINGS = 100;

export class ListFindings {
  readonly #state: MirrorState | null;
  readonly #runId: number | null;
  /** The first MAX_RUN_FINDINGS of this run, in the order found. */
  readonly first: RunFinding[] = [];
  #count = 0;

  /** `state` and `runId` null: a dry run, which records nothing. */
  constructor(state: MirrorState | null, runId: number | null) {
    this.#state = state;
    this.#runId = runId;
  }

  /** One document's findings, as the reader gave them. */
  add(document: string, findings: readonly Finding[]): void {
    if (findings.length === 0) return;
    const rows = findings.map((f) => ({ document, severity: f.severity, code: f.code, message: f.message, ...(f.line === undefined ? {} : { line: f.line }) }));
    this.#count += rows.length;
    for (const r of rows) if (this.first.length < MAX_RUN_FINDINGS) this.first.push(r);
    if (this.#state !== null && this.#runId !== null) this.#state.addRunFindings(this.#runId, rows, MAX_RUN_FINDINGS);
  }

  /** All the findings of this part of the run, kept or only counted. */
  get count(): number {
    return this.#count;
  }
}
