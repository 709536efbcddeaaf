// Keeps live notifications from filling the disk. They are applied outside `sync()`, one batch at a time, so the
// sync's guard (mirror/disk-reserve.ts) does not watch them: a hub sending notifications of large resources, one
// after another, would otherwise write until the disk is full. The same rule as a sync's: the free space is looked
// at a few times a second while a batch writes, and the batch stops once it falls below the reserve (1 GiB, or half
// of what was free at the mirror's first batch if that is less). The reserve is set once per mirror, not per batch:
// taken afresh each time, half of what is left would shrink batch after batch until nothing is left.
import { formatBytes } from '../http/errors.ts';
import { diskSpace, RESERVE_BYTES, type DiskSpaceProbe } from '../mirror/disk-reserve.ts';

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

export interface DiskWatch {
  /** Aborted, with a DiskLowError as its reason, once the free space fell below the reserve. */
  readonly signal: AbortSignal;
  stopped(): DiskLowError | null;
  stop(): void;
}

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
    this.#reserve ??= Math.min(RESERVE_BYTES, Math.floor(free / 2));
    return free < this.#reserve ? new DiskLowError(this.#folder, free, this.#reserve) : null;
  }

  /** Looks at the free space while a batch writes, until stopped. */
  watch(): DiskWatch {
    const controller = new AbortController();
    let checking = false;
    let timer: NodeJS.Timeout | null = null;
    const look = async () => {
      if (checking || controller.signal.aborted) return;
      checking = true;
      try {
        const low = await this.check();
        if (low !== null && timer !== null) {
          clearInterval(timer);
          timer = null;
          controller.abort(low);
        }
      } finally {
        checking = false;
      }
    };
    timer = setInterval(() => void look(), this.#everyMs);
    timer.unref();
    void look();
    return {
      signal: controller.signal,
      stopped: () => (controller.signal.aborted ? (controller.signal.reason as DiskLowError) : null),
      stop: () => {
        if (timer !== null) clearInterval(timer);
        timer = null;
      },
    };
  }
}
