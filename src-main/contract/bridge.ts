// The one shape every adapter gives the renderer: the Electron preload and the HTTP + SSE adapter.
import type { CommandArgs, CommandResult } from './commands.ts';
import type { CommandName, EventName } from './names.ts';
import type { Events } from './types.ts';

export interface Bridge {
  invoke<C extends CommandName>(command: C, args: CommandArgs<C>): Promise<CommandResult<C>>;
  /** Returns an unsubscribe that really removes the listener. */
  on<E extends EventName>(event: E, listener: (payload: Events[E]) => void): () => void;
}
