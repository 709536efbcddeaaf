// Keeps a run from filling the disk. A Source may send a resource or a package without a length, for ever, or list
// more than the disk holds; a full disk then breaks the computer's other programs, and a package's partial download
// (kept for resuming) would keep it full after the run. So the free space of the mirror's file system is looked at
// a few times a second while a run writes, and the run stops, as a cancel stops it (what was verified stays), once it
// falls below a reserve: 1 GiB, or half of what was free when the run began if that is less (a run begun on a nearly
// full disk still has room for a small incremental sync). Polled rather than counted write by write, so that every
// writer (downloads, package parts, extraction, the inventory) is covered and no hot path pays for it: at the disk's
// ~300 MB/s here, a quarter of a second is ~75 MB, well within the reserve.
import { statfs } from 'node:fs/promises';
import { formatBytes } from '../http/errors.ts';

export interface DiskSpace {
  /** Bytes free for an unprivileged user. */
  free: number;
}

export type DiskSpaceProbe = (path: string) => Promise<DiskSpace>;

export const diskSpace: DiskSpaceProbe = async (path) => {
  const s = await statfs(path);
  return { free: s.bavail * s.bsize };
};

export const RESERVE_BYTES = 1024 ** 3;

/** The reserve a first look at `free` bytes sets: RESERVE_BYTES, or half of what is free if that is less. */
export function reserveFor(free: number): number {
  return Math.min(RESERVE_BYTES, Math.floor(free / 2));
}
const EVERY_MS = 250;

/**
 * What a dump asks before it downloads or extracts a package whose length it knows (sync.ts gives the run's
 * DiskReserve): polling alone let a fast download run past the reserve of a small disk, and fill it, between looks.
 */
export interface PackageRoom {
  /**
   * Null when `needed` more bytes fit above the reserve (or the disk cannot say), else why not: a sentence that
   * begins with `what` ("Downloading the package …") and says after the bytes needed how they are known (`basis`,
   * "(by …)"). What follows from it is the caller's to say.
   */
  lacks(needed: number, what: string, basis?: string): Promise<string | null>;
  /** Stops the run on a full disk (a package of no declared length filled it between two looks). */
  full(): void;
}

export class DiskReserveError extends Error {
  constructor(folder: string, free: number, reserve: number) {
    super(
      free <= 0
        ? `The disk holding ${folder} is full, so the run stopped before it finished. What was verified stays. Free some space and run it again.`
        : `The disk holding ${folder} has only ${formatBytes(free)} free, so the run stopped to leave at least ${formatBytes(reserve)} for the rest of the computer. ` +
            'What was verified stays. Free some space and run it again.',
    );
    this.name = 'DiskReserveError';
  }
}

export interface DiskReserveOptions<E extends Error> {
  probe?: DiskSpaceProbe;
  everyMs?: number;
  /** The reserve, when the caller keeps it across runs (live batches); else set by the first look. */
  reserve?: number;
  /** The error the watch stops with (a sync's DiskReserveError by default). */
  stopError?: (folder: string, free: number, reserve: number) => E;
}

export class DiskReserve<E extends Error = DiskReserveError> implements PackageRoom {
  readonly #folder: string;
  readonly #probe: DiskSpaceProbe;
  readonly #everyMs: number;
  readonly #stopError: (folder: string, free: number, reserve: number) => E;
  readonly #controller = new AbortController();
  #reserve: number | null;
  #timer: NodeJS.Timeout | null = null;
  #checking = false;

  constructor(folder: string, options: DiskReserveOptions<E> = {}) {
    this.#folder = folder;
    this.#probe = options.probe ?? diskSpace;
    this.#everyMs = options.everyMs ?? EVERY_MS;
    this.#reserve = options.reserve ?? null;
    this.#stopError = options.stopError ?? ((f, free, reserve) => new DiskReserveError(f, free, reserve) as unknown as E);
  }

  /** Aborted, with the stop error as its reason, once the free space fell below the reserve. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the run stopped, once it did. */
  get stopped(): E | null {
    return this.#controller.signal.aborted ? (this.#controller.signal.reason as E) : null;
  }

  /** Starts looking (the first look sets the reserve). */
  start(): void {
    if (this.#timer !== null) return;
    void this.#check();
    this.#timer = setInterval(() => void this.#check(), this.#everyMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /**
   * A write found the disk full before a look did (a fast download fills a small disk between two looks): the watch
   * stops as it does below the reserve. Without it the run went on, and every resource after failed on the full disk.
   */
  full(): void {
    if (this.#timer === null || this.#controller.signal.aborted) return;
    this.stop();
    this.#controller.abort(this.#stopError(this.#folder, 0, this.#reserve ?? 0));
  }

  async lacks(needed: number, what: string, basis?: string): Promise<string | null> {
    const free = await this.#look();
    if (free === null || this.#reserve === null || needed <= free - this.#reserve) return null;
    return (
      `${what} needs ${formatBytes(needed)}${basis === undefined ? '' : ` ${basis}`}, but the disk holding ${this.#folder} has ${formatBytes(Math.max(0, free))} free, of which ${formatBytes(this.#reserve)} is kept ` +
      `for the rest of the computer.`
    );
  }

  async #check(): Promise<void> {
    if (this.#checking || this.#controller.signal.aborted) return;
    this.#checking = true;
    try {
      const free = await this.#look();
      if (free !== null && this.#reserve !== null && free < this.#reserve && this.#timer !== null) {
        this.stop();
        this.#controller.abort(this.#stopError(this.#folder, free, this.#reserve));
      }
    } finally {
      this.#checking = false;
    }
  }

  /** The bytes free (the first look sets the reserve), or null when the file system cannot say (or the folder is gone): no guard then rather than a run refused. */
  async #look(): Promise<number | null> {
    try {
      const { free } = await this.#probe(this.#folder);
      this.#reserve ??= reserveFor(free);
      return free;
    } catch {
      return null;
    }
  }
}
