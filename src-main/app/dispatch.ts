// The single entry point of every adapter: checks the command name, validates the arguments with the contract's
// zod schemas BEFORE any handler runs, and turns whatever a handler throws into a plain CommandError.
import { ZodError } from 'zod';
import { commandArgs, type CommandArgs, type CommandResult } from '../contract/commands.ts';
import { isCommandName, type CommandName } from '../contract/names.ts';
import type { CommandError } from '../contract/types.ts';
import { clipMessage } from '../engine/clip.ts';
import { DocumentError } from '../engine/documents/errors.ts';
import { NetworkError } from '../engine/http/index.ts';
import { InvalidArgumentsError, NotFoundError } from './errors.ts';

export type Envelope = { ok: true; result: unknown } | { ok: false; error: CommandError };

export type Handlers = {
  [C in CommandName]: (args: CommandArgs<C>) => Promise<CommandResult<C>> | CommandResult<C>;
};

export type Dispatch = (command: unknown, args: unknown) => Promise<Envelope>;

export type ErrorLogger = (message: string, error: unknown) => void;

const defaultLogger: ErrorLogger = (message, error) => console.error(message, error);

function describeZodError(error: ZodError): string {
  const problems = error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  return `Invalid arguments: ${problems.join('; ')}`;
}

/** Maps a thrown value to what crosses the boundary. Only the message of known errors; never a stack. */
export function toCommandError(error: unknown, command: string, log: ErrorLogger = defaultLogger): CommandError {
  if (error instanceof ZodError) return { code: 'invalid-arguments', message: describeZodError(error) };
  if (error instanceof InvalidArgumentsError) return { code: 'invalid-arguments', message: error.message };
  if (error instanceof NotFoundError) return { code: 'not-found', message: error.message };
  if (error instanceof DocumentError) {
    const where = error.line !== undefined && !/\bline\b/i.test(error.message) ? ` (line ${error.line})` : '';
    return { code: 'document', message: `${error.message}${where}` };
  }
  if (error instanceof NetworkError) return { code: 'network', message: error.message };
  log(`[service] ${command} failed:`, error);
  return { code: 'internal', message: `Internal error while running ${command}; details are in the application log.` };
}

export function createDispatch(handlers: Handlers, options: { log?: ErrorLogger } = {}): Dispatch {
  const log = options.log ?? defaultLogger;
  return async (command, args) => {
    if (!isCommandName(command)) {
      const shown = typeof command === 'string' ? JSON.stringify(command.slice(0, 100)) : typeof command;
      return { ok: false, error: { code: 'unknown-command', message: `Unknown command ${shown}` } };
    }
    const parsed = commandArgs[command].safeParse(args);
    if (!parsed.success) {
      return { ok: false, error: { code: 'invalid-arguments', message: clipMessage(`${command}: ${describeZodError(parsed.error)}`) } };
    }
    try {
      const handler = handlers[command] as (a: unknown) => Promise<unknown> | unknown;
      return { ok: true, result: await handler(parsed.data) };
    } catch (error) {
      const { code, message } = toCommandError(error, command, log);
      // Whatever an error quotes (a URL, a server's text), a reply stays a readable size.
      return { ok: false, error: { code, message: clipMessage(message) } };
    }
  };
}
