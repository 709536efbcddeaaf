// Command-line parsing: node's parseArgs does the splitting; the messages are ours. parseArgs' own errors speak
// of positional arguments and '--' when someone only mistyped an option; here every mistake is named in the
// words of the help text, with the nearest option or command when one is close ("did you mean --json?").
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from './usage.ts';

/** Levenshtein distance: a mistyped letter, a missing or an extra one each count 1. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate someone most likely meant by `typed`, or undefined when none is close: at most two edits away
 * (one for short words, so "-x" suggests nothing), or a candidate `typed` is the start of ("--max" → --max-documents).
 */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  const word = typed.toLowerCase();
  const allowed = word.length <= 4 ? 1 : 2;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = candidate.startsWith(word) && word.length >= 3 ? 0.5 : editDistance(word, candidate);
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

export function unknownCommand(typed: string, commands: readonly string[]): UsageError {
  const guess = closest(typed, commands);
  return new UsageError(`unknown command ${typed}${guess ? ` (did you mean ${guess}?)` : ''}`);
}

export function unknownOption(typed: string, options: readonly string[]): UsageError {
  const guess = typed.startsWith('--') ? closest(typed, options) : undefined;
  return new UsageError(`unknown option ${typed}${guess ? ` (did you mean ${guess}?)` : ''}`);
}

/** Options whose values are never repeated in a message (a terminal's scrollback, a CI log). */
const SECRET_OPTIONS = new Set(['token', 'basic', 'secret']);

/**
 * Parses `args` for `command`. Unknown options get the nearest option of this command, or name the command that
 * has them; a string option without a value and a boolean given one are said so plainly.
 */
export function parseCommandArgs<O extends ParseArgsOptionsConfig>(
  command: string,
  args: string[],
  options: O,
  others: Readonly<Record<string, ParseArgsOptionsConfig>> = {},
) {
  const { tokens } = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  const own = Object.keys(options).map((name) => `--${name}`);
  const givenOnce = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) {
      const guess = token.rawName.startsWith('--') ? closest(token.rawName, own) : undefined;
      const elsewhere = Object.entries(others)
        .filter(([other, config]) => other !== command && Object.hasOwn(config, token.name))
        .map(([other]) => other);
      const hint = guess
        ? ` (did you mean ${guess}?)`
        : elsewhere.length > 0 && token.rawName.startsWith('--')
          ? ` (rsdesk ${elsewhere.join(', ')} ${elsewhere.length === 1 ? 'takes' : 'take'} it; ${command} does not)`
          : '';
      throw new UsageError(`unknown option ${token.rawName}${hint}`);
    }
    if (option.type === 'string') {
      if (token.value === undefined) throw new UsageError(`${token.rawName} needs a value`);
      if (!token.inlineValue && token.value.startsWith('-')) {
        throw new UsageError(`${token.rawName} needs a value (to give one that starts with "-", write ${token.rawName}=${token.value})`);
      }
      // parseArgs keeps the last of two values silently: `--dest a … --dest b` mirrored into b, and a script's
      // `--dest "$OLD"` left in front of a new one went unnoticed. Said instead; the same value twice is harmless.
      const before = givenOnce.get(token.name);
      if (!option.multiple && before !== undefined && before !== token.value) {
        const values = SECRET_OPTIONS.has(token.name) ? ' with two values' : `, as ${JSON.stringify(before)} and as ${JSON.stringify(token.value)}`;
        throw new UsageError(`--${token.name} is given twice${values}: give it once`);
      }
      givenOnce.set(token.name, token.value);
    } else if (token.inlineValue) {
      throw new UsageError(`${token.rawName} takes no value`);
    }
  }
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    // Not reached for the mistakes above; anything else parseArgs refuses still ends as a usage error.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
