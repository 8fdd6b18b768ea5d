// The one path by which a command ends with an error: a single line `buildscope <command>: <message>`
// on standard error, never a stack trace (files starting with `_` are not commands).
// Commands call fail() for what they check themselves; anything thrown out of an action reaches
// main.ts, which turns it into the same kind of line with errorLine().

/** Prints `buildscope <command>: <message>` (no command: `buildscope: …`) and exits (2: bad usage or configuration). */
export function fail(command: string, message: string, code = 2): never {
  process.stderr.write(`buildscope${command ? ` ${command}` : ''}: ${oneLine(message)}\n`);
  process.exit(code);
}

/** Ends the command with the one-line description of an error thrown by a library (status 1, or 2 for a configuration error). */
export function failWith(command: string, error: unknown, context?: string): never {
  // BUILDSCOPE_DEBUG=1 shows where an unexpected error came from.
  if (process.env['BUILDSCOPE_DEBUG']) process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  fail(command, context === undefined ? errorLine(error) : `${context}: ${errorLine(error)}`, exitCode(error));
}

// Errors that describe the user's own input or setup: status 2, like a bad option.
const USAGE_ERRORS = new Set(['ConfigError', 'UserError', 'DatabaseLocationError', 'CliUsageError']);

function exitCode(error: unknown): number {
  return error instanceof Error && USAGE_ERRORS.has(error.name) ? 2 : 1;
}

// System error codes a person meets on the command line, said in words.
const SYSTEM_ERRORS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on device',
  EADDRINUSE: 'address already in use',
};

/** One line that says what went wrong, from an error of any kind (causes included, stack never). */
export function errorLine(error: unknown): string {
  if (!(error instanceof Error)) return oneLine(String(error));
  const code = (error as NodeJS.ErrnoException).code;
  const path = (error as NodeJS.ErrnoException).path;
  let message = error.message;
  // Node's own wording ("EISDIR: illegal operation on a directory, read") says less than the path.
  if (code !== undefined && SYSTEM_ERRORS[code] !== undefined && message.startsWith(`${code}:`)) {
    message = path !== undefined ? `${path}: ${SYSTEM_ERRORS[code]}` : SYSTEM_ERRORS[code]!;
  }
  // AggregateError (several addresses tried) has an empty message; its parts say why.
  if (message === '' && error instanceof AggregateError && error.errors.length > 0) message = errorLine(error.errors[0]);
  if (message === '') message = error.name;
  return oneLine(message);
}

function oneLine(s: string): string {
  const lines = s.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
  return lines.join(' ') || 'failed';
}
