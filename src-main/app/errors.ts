// Errors the service throws on purpose; dispatch maps them (and engine errors) to CommandError codes.

/** An id, URL or position the person asked for does not exist (or discovery found no Source). */
export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

/** Arguments that passed the schema but still cannot be used (e.g. a start URL that is no URL at all). */
export class InvalidArgumentsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArgumentsError';
  }
}

/** The person cancelled the work (a discovery); nothing was saved. */
export class CancelledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CancelledError';
  }
}

/** A mirror cannot do what was asked now (it is locked by another program, running, not bound, …): the message says why. */
export class MirrorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MirrorError';
  }
}

/**
 * The Source answered 401 or 403: it wants a sign-in for `origin` (`refusedSignIn`: credentials were sent and
 * refused). The message says so in plain words; the UI offers the sign-in.
 */
export class UnauthorizedError extends Error {
  readonly origin: string;
  readonly refusedSignIn: boolean;
  constructor(message: string, origin: string, refusedSignIn: boolean) {
    super(message);
    this.name = 'UnauthorizedError';
    this.origin = origin;
    this.refusedSignIn = refusedSignIn;
  }
}
