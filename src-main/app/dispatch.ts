// The single entry point of every adapter: checks the command name, validates the arguments with the contract's
// zod schemas BEFORE any handler runs, and turns whatever a handler throws into a plain CommandError.
import { ZodError } from 'zod';
import { commandArgs, type CommandArgs, type CommandResult } from '../contract/commands.ts';
import { isCommandName, type CommandName } from '../contract/names.ts';
import type { CommandError } from '../contract/types.ts';
import { clipMessage } from '../engine/clip.ts';
import { DocumentError } from '../engine/documents/errors.ts';
import { NetworkError } from '../engine/http/index.ts';
import { CancelledError, InvalidArgumentsError, MirrorError, NotFoundError, UnauthorizedError } from './errors.ts';

export type Envelope = { ok: true; result: unknown } | { ok: false; error: CommandError };

export type Handlers = {
  [C in CommandName]: (args: CommandArgs<C>) => Promise<CommandResult<C>> | CommandResult<C>;
};

export type Dispatch = (command: unknown, args: unknown) => Promise<Envelope>;

export type ErrorLogger = (message: string, error: unknown) => void;

const defaultLogger: ErrorLogger = (message, error) => console.error(message, error);

/**
 * Wording for what a schema gives no message of its own: only a programming error (an adapter or the renderer
 * sending a malformed request) meets these, but they still read as sentences, naming the argument.
 */
function genericIssue(issue: { code: string; path?: PropertyKey[]; input?: unknown; [key: string]: unknown }): string {
  const name = issue.path && issue.path.length > 0 ? issue.path.map(String).join('.') : 'the request';
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? `${name} is missing` : `${name} must be ${article(String(issue.expected))}`;
    case 'too_small':
      return issue.origin === 'string' && issue.minimum === 1 ? `${name} must not be empty` : `${name} must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return `${name} must be at most ${String(issue.maximum)}`;
    case 'unrecognized_keys':
      return `unknown argument${(issue.keys as string[]).length > 1 ? 's' : ''} ${(issue.keys as string[]).map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_value':
      return `${name} must be one of ${(issue.values as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${name} is not valid`;
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** The schema's own messages (written for people) as they are; the generic ones joined behind a short lead. */
function describeZodError(error: ZodError): { message: string; field?: string } {
  const messages = [...new Set(error.issues.map((issue) => issue.message))];
  const first = error.issues[0]?.path[0];
  const text = messages.join('; ');
  return { message: /[.!?]$/.test(text) ? text : `${text}.`, ...(first !== undefined ? { field: String(first) } : {}) };
}

/** Maps a thrown value to what crosses the boundary. Only the message of known errors; never a stack. */
export function toCommandError(error: unknown, command: string, log: ErrorLogger = defaultLogger): CommandError {
  if (error instanceof ZodError) return { code: 'invalid-arguments', ...describeZodError(error) };
  if (error instanceof CancelledError) return { code: 'cancelled', message: error.message };
  if (error instanceof InvalidArgumentsError) return { code: 'invalid-arguments', message: error.message };
  if (error instanceof NotFoundError) return { code: 'not-found', message: error.message };
  if (error instanceof MirrorError) return { code: 'mirror', message: error.message };
  if (error instanceof UnauthorizedError) return { code: 'sign-in', message: error.message, origin: error.origin, refusedSignIn: error.refusedSignIn };
  if (error instanceof DocumentError) {
    const where = error.line !== undefined && !/\bline\b/i.test(error.message) ? ` (line ${error.line})` : '';
    return { code: 'document', message: `${error.message}${where}` };
  }
  if (error instanceof NetworkError) return { code: 'network', message: error.message };
  log(`[service] ${command} failed:`, error);
  return { code: 'internal', message: 'Something went wrong inside the app; the details are in its log.' };
}

export function createDispatch(handlers: Handlers, options: { log?: ErrorLogger } = {}): Dispatch {
  const log = options.log ?? defaultLogger;
  return async (command, args) => {
    if (!isCommandName(command)) {
      const shown = typeof command === 'string' ? JSON.stringify(command.slice(0, 100)) : typeof command;
      return { ok: false, error: { code: 'unknown-command', message: `Unknown command ${shown}` } };
    }
    const parsed = commandArgs[command].safeParse(args, { error: (issue) => genericIssue(issue as Parameters<typeof genericIssue>[0]) });
    if (!parsed.success) {
      const { message, field } = describeZodError(parsed.error);
      return { ok: false, error: { code: 'invalid-arguments', message: clipMessage(message), ...(field !== undefined ? { field } : {}) } };
    }
    try {
      const handler = handlers[command] as (a: unknown) => Promise<unknown> | unknown;
      return { ok: true, result: await handler(parsed.data) };
    } catch (error) {
      const failure = toCommandError(error, command, log);
      // Whatever an error quotes (a URL, a server's text), a reply stays a readable size.
      return { ok: false, error: { ...failure, message: clipMessage(failure.message) } };
    }
  };
}
