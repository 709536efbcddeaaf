// rsdesk: the command line. `main` returns the exit code; bin/rsdesk.mjs sets it.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { jsonError, processIo, type Io } from './io.ts';
import { defaultDataDir, packageVersion, rendererDir } from './paths.ts';
import { parseCommandArgs, unknownCommand, unknownOption } from './args.ts';
import { DiskFullError, isDiskFull } from '../engine/mirror/disk-full.ts';
import { MirrorLockedError } from '../engine/mirror/lock.ts';
import { EXIT_FAILED, EXIT_TRY_LATER, EXIT_USAGE } from './exit-codes.ts';
import { HELP, parseConcurrency, parseDataDir, parseDelay, parseDest, parseMaxDocuments, parsePort, parseRefusalLimit, parseRunId, parseTimeout, UsageError } from './usage.ts';

export const COMMANDS = ['discover', 'inspect', 'check', 'serve', 'sync', 'retry', 'audit', 'runs', 'watch'] as const;
type Command = (typeof COMMANDS)[number];

const NETWORK_OPTIONS = {
  json: { type: 'boolean' },
  token: { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const SERVE_OPTIONS = {
  port: { type: 'string' },
  'live-port': { type: 'string' },
  'data-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** --quiet: no progress, no notes; stderr says something only when the command does not exit 0 (a cron line mails it). */
const QUIET = { quiet: { type: 'boolean', short: 'q' } } as const;

const CHECK_OPTIONS = { ...NETWORK_OPTIONS, 'max-documents': { type: 'string' } } as const;

const SYNC_OPTIONS = {
  ...NETWORK_OPTIONS,
  dest: { type: 'string' },
  capabilitylist: { type: 'string' },
  map: { type: 'string', multiple: true },
  'allow-host': { type: 'string', multiple: true },
  mode: { type: 'string' },
  'use-dumps': { type: 'boolean' },
  'with-metadata': { type: 'boolean' },
  delete: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'allow-mass-delete': { type: 'boolean' },
  concurrency: { type: 'string' },
  delay: { type: 'string' },
  basic: { type: 'string' },
  header: { type: 'string', multiple: true },
  proxy: { type: 'string' },
  'forget-credentials': { type: 'boolean' },
  'pause-after-refusals': { type: 'string' },
  ...QUIET,
} as const;

const RETRY_OPTIONS = { ...NETWORK_OPTIONS, ...QUIET, dest: { type: 'string' }, run: { type: 'string' }, all: { type: 'boolean' }, concurrency: { type: 'string' }, basic: { type: 'string' } } as const;
const AUDIT_OPTIONS = { ...NETWORK_OPTIONS, ...QUIET, dest: { type: 'string' }, rehash: { type: 'boolean' }, last: { type: 'boolean' }, basic: { type: 'string' } } as const;
const WATCH_OPTIONS = {
  dest: { type: 'string' },
  listen: { type: 'string' },
  'public-url': { type: 'string' },
  secret: { type: 'string' },
  lease: { type: 'string' },
  apply: { type: 'boolean' },
  'sync-on-ping': { type: 'boolean' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;
const RUNS_OPTIONS = { dest: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

/**
 * Every command's options, so a mistyped or misplaced option can be named with the command that has it (and
 * help.test.ts can hold each --help to them).
 */
export const OPTIONS = {
  discover: NETWORK_OPTIONS,
  inspect: NETWORK_OPTIONS,
  check: CHECK_OPTIONS,
  serve: SERVE_OPTIONS,
  sync: SYNC_OPTIONS,
  retry: RETRY_OPTIONS,
  audit: AUDIT_OPTIONS,
  runs: RUNS_OPTIONS,
  watch: WATCH_OPTIONS,
} as const satisfies Record<Command, unknown>;

function parse<C extends Command>(command: C, args: string[]) {
  return parseCommandArgs(command, args, OPTIONS[command] as (typeof OPTIONS)[C], OPTIONS);
}

function onePositional(positionals: string[], what: string): string {
  if (positionals.length === 0) throw new UsageError(`missing ${what}`);
  if (positionals.length > 1) throw new UsageError(`expected one ${what}, got ${positionals.length} arguments`);
  return positionals[0]!;
}

async function run(command: Command, args: string[], io: Io, version: string): Promise<number> {
  const userAgent = `ResourceSync-Desktop/${version} (rsdesk)`;
  if (command === 'serve') {
    const { values, positionals } = parse('serve', args);
    if (values.help) {
      io.out(HELP.serve);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got ${JSON.stringify(positionals[0])}`);
    const given = parseDataDir(values['data-dir']);
    const dataDir = given !== undefined ? resolve(given) : defaultDataDir();
    const port = parsePort(values.port);
    const livePort = parsePort(values['live-port'], '--live-port');
    const { serveCommand } = await import('./serve-command.ts');
    return serveCommand({ port, livePort, dataDir, rendererDir: rendererDir(), version }, io);
  }
  if (command === 'check') {
    const { values, positionals } = parse('check', args);
    if (values.help) {
      io.out(HELP.check);
      return 0;
    }
    const url = onePositional(positionals, 'URL');
    const options = { url, json: values.json ?? false, token: values.token, timeoutMs: parseTimeout(values.timeout), userAgent };
    const { checkCommand } = await import('./check-command.ts');
    return checkCommand({ ...options, maxDocuments: parseMaxDocuments(values['max-documents']) }, io);
  }
  if (command === 'sync' || command === 'retry' || command === 'audit' || command === 'runs') return mirrorCommand(command, args, io, userAgent);
  if (command === 'watch') {
    const { values, positionals } = parse('watch', args);
    if (values.help) return void io.out(HELP.watch), 0;
    if (positionals.length > 1) throw new UsageError(`expected one URL, got ${positionals.length} arguments`);
    const { watchCommand } = await import('./watch-command.ts');
    return watchCommand(
      {
        url: positionals[0],
        dest: parseDest(values.dest),
        listen: values.listen,
        publicUrl: values['public-url'],
        secret: values.secret,
        lease: values.lease,
        apply: values.apply ?? false,
        syncOnPing: values['sync-on-ping'] ?? false,
        json: values.json ?? false,
        timeoutMs: parseTimeout(values.timeout),
      },
      io,
    );
  }
  const { values, positionals } = parse(command, args);
  if (values.help) {
    io.out(HELP[command]);
    return 0;
  }
  const common = { json: values.json ?? false, token: values.token, timeoutMs: parseTimeout(values.timeout), userAgent };
  // Commands are loaded on use: --help and usage errors answer without loading the engine.
  if (command === 'discover') {
    const url = onePositional(positionals, 'URL');
    const { discoverCommand } = await import('./discover-command.ts');
    return discoverCommand({ url, ...common }, io);
  }
  const target = onePositional(positionals, 'URL or file');
  const { inspectCommand } = await import('./inspect-command.ts');
  return inspectCommand({ target, ...common }, io);
}

type MirrorCommand = 'sync' | 'retry' | 'audit' | 'runs';

async function mirrorCommand(command: MirrorCommand, args: string[], io: Io, userAgent: string): Promise<number> {
  let dest: string | undefined;
  try {
    return await mirrorCommandIn(command, args, io, userAgent, (d) => (dest = d));
  } catch (err) {
    // SQLite's "database or disk is full" and Node's "ENOSPC: no space left on device, write" say nothing to an
    // archivist: the folder whose disk is full, and what to do, does.
    if (dest !== undefined && !(err instanceof DiskFullError) && isDiskFull(err)) throw new DiskFullError(resolve(dest), true);
    throw err;
  }
}

async function mirrorCommandIn(command: MirrorCommand, args: string[], io: Io, userAgent: string, onDest: (dest: string) => void): Promise<number> {
  // Loaded on use, after the arguments are checked (as for the other commands).
  const commands = () => import('./mirror-commands.ts');
  const needDest = (dest: string | undefined) => {
    if (dest === undefined) throw new UsageError('missing --dest <dir>');
    const checked = parseDest(dest)!;
    onDest(checked);
    return checked;
  };
  if (command === 'runs') {
    const { values, positionals } = parse('runs', args);
    if (values.help) return void io.out(HELP.runs), 0;
    if (positionals.length > 0) throw new UsageError(`runs takes no arguments, got ${JSON.stringify(positionals[0])}`);
    return (await commands()).runsCommand({ dest: needDest(values.dest), json: values.json ?? false }, io);
  }
  if (command === 'retry') {
    const { values, positionals } = parse('retry', args);
    if (values.help) return void io.out(HELP.retry), 0;
    if (positionals.length > 0) throw new UsageError(`retry takes no arguments, got ${JSON.stringify(positionals[0])}`);
    if (values.all && values.run !== undefined) throw new UsageError('--all and --run cannot go together: --all retries the failures of every run');
    const options = {
      dest: needDest(values.dest),
      runId: parseRunId(values.run),
      all: values.all ?? false,
      json: values.json ?? false,
      quiet: values.quiet ?? false,
      concurrency: parseConcurrency(values.concurrency),
      token: values.token,
      basic: values.basic,
      timeoutMs: parseTimeout(values.timeout),
      userAgent,
    };
    return (await commands()).retryCommand(options, io);
  }
  if (command === 'audit') {
    const { values, positionals } = parse('audit', args);
    if (values.help) return void io.out(HELP.audit), 0;
    if (positionals.length > 0) throw new UsageError(`audit takes no arguments, got ${JSON.stringify(positionals[0])}`);
    const dest = needDest(values.dest);
    if (values.last && values.rehash) throw new UsageError('--last prints the kept report; --rehash runs a new audit: give one of them');
    const timeoutMs = parseTimeout(values.timeout);
    return (await commands()).auditCommand(
      { dest, rehash: values.rehash ?? false, json: values.json ?? false, quiet: values.quiet ?? false, last: values.last ?? false, token: values.token, basic: values.basic, timeoutMs, userAgent },
      io,
    );
  }
  const { values, positionals } = parse('sync', args);
  if (values.help) return void io.out(HELP.sync), 0;
  if (positionals.length > 1) throw new UsageError(`expected one URL, got ${positionals.length} arguments`);
  const options = {
    url: positionals[0],
    dest: needDest(values.dest),
    capabilityList: values.capabilitylist,
    maps: values.map ?? [],
    allowHosts: values['allow-host'] ?? [],
    mode: values.mode,
    useDumps: values['use-dumps'] ?? false,
    withMetadata: values['with-metadata'] ?? false,
    delete: values.delete,
    dryRun: values['dry-run'] ?? false,
    allowMassDelete: values['allow-mass-delete'] ?? false,
    concurrency: parseConcurrency(values.concurrency),
    delayMs: parseDelay(values.delay),
    json: values.json ?? false,
    quiet: values.quiet ?? false,
    token: values.token,
    basic: values.basic,
    headers: values.header ?? [],
    proxy: values.proxy,
    forgetCredentials: values['forget-credentials'] ?? false,
    timeoutMs: parseTimeout(values.timeout),
    refusalLimitMs: parseRefusalLimit(values['pause-after-refusals']),
    userAgent,
  };
  return (await commands()).syncCommand(options, io);
}

export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const version = packageVersion();
  const [first, ...rest] = argv;
  // Whether the command printed anything on stdout: a --json command that failed before it did prints its error there.
  let printed = false;
  const given = io;
  // The caller's io in all else (its terminal, its drain), seen through.
  io = Object.create(given) as Io;
  io.out = (text) => {
    printed = true;
    given.out(text);
  };
  try {
    if (first === undefined) throw new UsageError('missing command');
    if (first === 'help' && rest.length > 0) {
      // `rsdesk help retry` is `rsdesk retry --help`, as git and npm take it.
      if (rest.length > 1) throw new UsageError(`help takes one command, got ${rest.length} arguments`);
      if (!(COMMANDS as readonly string[]).includes(rest[0]!)) throw unknownCommand(rest[0]!, COMMANDS);
      io.out(HELP[rest[0] as Command]);
      return 0;
    }
    if (first === '--help' || first === '-h' || first === 'help') {
      io.out(HELP.main);
      return 0;
    }
    if (first === '--version' || first === '-v') {
      io.out(`${version}\n`);
      return 0;
    }
    if (first.startsWith('-')) throw unknownOption(first, ['--help', '--version']);
    if (!(COMMANDS as readonly string[]).includes(first)) throw unknownCommand(first, COMMANDS);
    return await run(first as Command, rest, io, version);
  } catch (error) {
    if (error instanceof UsageError) {
      // The error, then the command's synopsis alone: its whole help would bury the one line that matters.
      const command = first && (COMMANDS as readonly string[]).includes(first) ? (first as Command) : null;
      io.err(`rsdesk: ${error.message}\n\n${command === null ? HELP.main : `${synopsis(HELP[command])}\nRun "rsdesk ${command} --help" for every option.\n`}`);
      return EXIT_USAGE;
    }
    const message = isDiskFull(error) && !(error instanceof DiskFullError) ? 'The disk is full, so rsdesk stopped. Free some space and try again.' : error instanceof Error ? error.message : String(error);
    io.err(`rsdesk: ${message}\n`);
    // A script that asked for JSON reads one JSON document on stdout whatever happened (an unreachable Source, a folder
    // that is no mirror, a lock held by the app), not an empty output its JSON parser chokes on.
    if (!printed && (COMMANDS as readonly string[]).includes(first!) && askedForJson(first as Command, rest)) io.out(`${jsonError(message)}\n`);
    // Another live process writes the folder (an overlapping cron run, the app): nothing was done, and nothing is
    // wrong; a lock file that cannot be read (holder null) needs a person, and stays a failure.
    return error instanceof MirrorLockedError && error.holder !== null ? EXIT_TRY_LATER : EXIT_FAILED;
  }
}

/** Whether `args` (parsed already without a usage error) give --json to a command whose --json prints one document. */
function askedForJson(command: Command, args: string[]): boolean {
  // watch prints one JSON object per event, its errors among them; serve prints no JSON.
  if (command === 'watch' || command === 'serve') return false;
  const { tokens } = parseArgs({ args, options: OPTIONS[command], allowPositionals: true, strict: false, tokens: true });
  return tokens.some((t) => t.kind === 'option' && t.name === 'json');
}

/** A command's help up to its first blank line: the Usage lines. */
function synopsis(help: string): string {
  const end = help.indexOf('\n\n');
  return end === -1 ? help : help.slice(0, end + 1);
}
