// Internal errors: what the types rule out but a caller from plain JavaScript (or a future change)
// could still bring about. They are thrown, never compiled into a silently wrong answer.

export class InternalError extends Error {
  override readonly name = 'InternalError';
}

/** The default of an exhaustive switch: a compile error when a case is missing, a throw at run time. */
export function assertNever(value: never, what: string): never {
  throw new InternalError(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
