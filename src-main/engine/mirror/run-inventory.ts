// The inventory as one run's Applier sees it: the same answers as MirrorState's lookups, but without a query when the
// answer is already known. A first baseline starts from an empty inventory, and while it runs only its own Applier
// writes rows (the folder's lock keeps other processes out): a URI this run has not recorded cannot have a row, and
// every path a row holds was claimed through this run's PathClaims, which answers before the store is asked. Three
// queries per resource (row by URI, file by path, rows under a path) cost about a fifth of the main thread's time in
// a baseline of small files; here they cost nothing. An inventory that held rows at the start is asked as before.
import type { ClaimStore, PathClaims } from './local-path.ts';
import type { InventoryRow, MirrorState } from './state.ts';

/**
 * URIs remembered before lookups go back to the database, where memory stays the same whatever the size of the
 * baseline (the path claims of this run go there too: Applier). Two million held 200 MB and more.
 */
export const MAX_REMEMBERED = 100_000;

export class RunInventory implements ClaimStore {
  readonly #state: MirrorState;
  /** The inventory held no row when the run began, and `#recorded` lists every URI this run recorded since. */
  #fresh: boolean;
  /** Paths: no row was removed in this run either, so every row's path is one PathClaims claimed in this run. */
  #claimsKnown: boolean;
  readonly #recorded = new Set<string>();
  /** The run's path claims, told when the store answers for a path they hold (`recorded`). */
  #claims: PathClaims | null = null;
  readonly #max: number;
  /** The inventory held no row when the run began: every row it holds now, this run recorded. */
  readonly startedEmpty: boolean;

  constructor(state: MirrorState, max = MAX_REMEMBERED) {
    this.#state = state;
    this.#max = max;
    this.startedEmpty = state.isEmpty();
    this.#fresh = this.startedEmpty;
    this.#claimsKnown = this.#fresh;
  }

  /** True while lookups are answered from memory (tests, and the reasoning above). */
  get fresh(): boolean {
    return this.#fresh;
  }

  /** Paths are asked of the store: every path a row of this run holds is answered there once committed. */
  get pathsStored(): boolean {
    return !this.#claimsKnown;
  }

  /** The row for `uri`, as MirrorState.get. */
  get(uri: string): InventoryRow | null {
    if (this.#fresh && !this.#recorded.has(uri)) return null;
    return this.#state.get(uri);
  }

  /** The run's path claims (made with this as their store): what the store answers for, they forget. */
  attach(claims: PathClaims): void {
    this.#claims = claims;
  }

  /**
   * Called for every row this run records (inside the batch's transaction, as it is put). Once the store answers for
   * paths (past the bound, or in an inventory that held rows), the path claimed for the row is forgotten by the
   * claims: the row answers for it. Else a baseline of millions of new resources held all its claims until its end.
   */
  recorded(uri: string, path: string): void {
    if (this.#claimsKnown) {
      if (this.#recorded.size < this.#max) {
        this.#recorded.add(uri);
        return;
      }
      this.#fresh = false;
      this.#claimsKnown = false;
      this.#recorded.clear();
      this.#claims?.forgetStored();
      return;
    }
    if (this.#fresh && this.#recorded.size < this.#max) this.#recorded.add(uri);
    else if (this.#fresh) {
      this.#fresh = false;
      this.#recorded.clear();
    }
    this.#claims?.stored(path, uri);
  }

  /** A removal of the row that held `path` was committed (or failed, the row kept): the store answers for it again. */
  removalSettled(path: string): void {
    this.#claims?.settled(path);
  }

  /** Called for every row this run removes (a deletion): paths are asked of the store from then on. */
  removed(): void {
    this.#claimsKnown = false;
  }

  fileByKey(key: string): { path: string; uri: string } | undefined {
    return this.#claimsKnown ? undefined : this.#state.fileByKey(key);
  }

  hasUnder(key: string): boolean {
    return this.#claimsKnown ? false : this.#state.hasUnder(key);
  }
}
