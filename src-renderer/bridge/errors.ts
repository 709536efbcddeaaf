import type { CommandError } from '../../src-main/contract/types.ts';

/** Codes of the contract plus the two failures only a transport can have. */
export type BridgeErrorCode = CommandError['code'] | 'unauthorized' | 'transport';

/** A failed command, with the engine's code so the UI can tell "not found" from "network". */
export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  /** The argument an invalid-arguments message is about, when the engine names one. */
  readonly field?: string;
  /** For sign-in: the origin that asks for one, and whether credentials were sent and refused. */
  readonly origin?: string;
  readonly refusedSignIn?: boolean;

  constructor(code: BridgeErrorCode, message: string, field?: string, signIn?: { origin?: string; refusedSignIn?: boolean }) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
    if (field !== undefined) this.field = field;
    if (signIn?.origin !== undefined) this.origin = signIn.origin;
    if (signIn?.refusedSignIn !== undefined) this.refusedSignIn = signIn.refusedSignIn;
  }
}

/** When a Source answered 401 or 403: the origin to sign in to, and whether credentials were sent and refused. */
export function signInNeeded(error: unknown): { origin: string; refused: boolean } | null {
  if (errorCode(error) !== 'sign-in' || typeof error !== 'object' || error === null) return null;
  const origin = 'origin' in error && typeof error.origin === 'string' ? error.origin : null;
  if (origin === null) return null;
  return { origin, refused: 'refusedSignIn' in error && error.refusedSignIn === true };
}

/** The code of a failed command, whichever adapter threw it (the preload's errors carry `code` too). */
export function errorCode(error: unknown): string | null {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return null;
}

/** The argument an invalid-arguments error is about ("timeoutMs"), when the engine named one. */
export function errorField(error: unknown): string | null {
  if (typeof error === 'object' && error !== null && 'field' in error && typeof error.field === 'string') return error.field;
  return null;
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return String(error);
}
