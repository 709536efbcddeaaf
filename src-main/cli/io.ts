export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal: progress is drawn there only then. */
  readonly errIsTTY?: boolean;
  /** Width of that terminal, in columns. */
  readonly errColumns?: number;
  /**
   * Resolves once what `out` was given has left the process's buffer: a pipe takes it as fast as its reader reads,
   * and a long output written without waiting is held in memory whole meanwhile.
   */
  drained?(): Promise<void>;
}

/**
 * What a --json command prints on stdout when it ends without its document (an error, a stop): one JSON object
 * still, `{"error": {"message"}}`, as rsdesk inspect's refusals carry theirs.
 */
export function jsonError(message: string): string {
  return JSON.stringify({ error: { message } });
}

export const processIo: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  get errIsTTY() {
    return process.stderr.isTTY === true;
  },
  get errColumns() {
    return process.stderr.columns;
  },
  drained: () => (process.stdout.writableNeedDrain ? new Promise<void>((resolve) => void process.stdout.once('drain', resolve)) : Promise.resolve()),
};

/**
 * One line of progress on a terminal's stderr, redrawn in place (at most 5 times a second) and erased before anything
 * else is written there or when the command ends. Nothing at all when stderr is not a terminal (a log, a pipe).
 */
export class ProgressLine {
  readonly #io: Io;
  /** --quiet: none even on a terminal. */
  readonly #off: boolean;
  #shown = false;
  #last = 0;
  #pending: string | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(io: Io, off = false) {
    this.#io = io;
    this.#off = off;
  }

  get enabled(): boolean {
    return !this.#off && this.#io.errIsTTY === true;
  }

  draw(text: string, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.#last < 200) {
      // The newest state is drawn when the pause is over, so a burst never leaves an old count on screen.
      this.#pending = text;
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        if (this.#pending !== undefined) this.draw(this.#pending, true);
      }, 200 - (now - this.#last)).unref();
      return;
    }
    this.#pending = undefined;
    this.#last = now;
    const width = Math.max(20, (this.#io.errColumns ?? 80) - 1);
    const line = text.length > width ? `${text.slice(0, width - 1)}…` : text;
    this.#io.err(`\r\x1b[K${line}`);
    this.#shown = true;
  }

  /** Erases the line (before a note, or at the end). */
  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
    if (!this.#shown) return;
    this.#io.err('\r\x1b[K');
    this.#shown = false;
  }
}
