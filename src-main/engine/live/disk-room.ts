// Keeps live notifications from filling the disk. They are applied outside `sync()`, one batch at a time, so the
// sync's guard does not watch them: a hub sending notifications of large resources, one after another, would
// otherwise write until the disk is full. Each batch is watched by the sync's own watch (mirror/disk-reserve.ts): the
// free space is looked at a few times a second, and the batch stops once it falls below the reserve (1 GiB, or half
// of what was free at the mirror's first batch if that is less). The reserve is set once per mirror, not per batch:
// taken afresh each time, half of what is left would shrink batch after batch until nothing is left.
import { formatBytes } from '../http/errors.ts';
import { DiskReserve, diskSpace, reserveFor, type DiskSpaceProbe } from '../mirror/disk-reserve.ts';

export interface DiskRoomOptions {
  probe?: DiskSpaceProbe;
  /** How often the free space is read while a batch writes. */
  everyMs?: number;
}

export class DiskLowError extends Error {
  readonly free: number;
  readonly reserve: number;
  constructor(folder: string, free: number, reserve: number) {
    super(
      `The disk holding ${folder} has only ${formatBytes(Math.max(0, free))} free, so live notifications stopped being applied to leave at least ${formatBytes(reserve)} for the rest of the computer.`,
    );
    this.name = 'DiskLowError';
    this.free = free;
    this.reserve = reserve;
  }
}

/** Watches the free space while a batch writes: the sync's watch, with the mirror's reserve and the live message. */
export type DiskWatch = DiskReserve<DiskLowError>;

export class DiskRoom {
  readonly #folder: string;
  readonly #probe: DiskSpaceProbe;
  readonly #everyMs: number;
  #reserve: number | null = null;

  constructor(folder: string, options: DiskRoomOptions = {}) {
    this.#folder = folder;
    this.#probe = options.probe ?? diskSpace;
    this.#everyMs = options.everyMs ?? 250;
  }

  /** Why nothing should be written now; null when there is room (or the file system cannot say). */
  async check(): Promise<DiskLowError | null> {
    let free: number;
    try {
      ({ free } = await this.#probe(this.#folder));
    } catch {
      // A file system that cannot say: no guard rather than notifications never applied.
      return null;
    }
    this.#reserve ??= reserveFor(free);
    return free < this.#reserve ? new DiskLowError(this.#folder, free, this.#reserve) : null;
  }

  /** Looks at the free space while a batch writes, until stopped (the first look sets the mirror's reserve). */
  async watch(): Promise<DiskWatch> {
    await this.check();
    const watch = new DiskReserve(this.#folder, {
      probe: this.#probe,
      everyMs: this.#everyMs,
      reserve: this.#reserve ?? undefined,
      stopError: (folder, free, reserve) => new DiskLowError(folder, free, reserve),
    });
    watch.start();
    return watch;
  }
}
