// Ends a command with a message a person can act on (files starting with `_` are not commands).

/** Prints `buildscope <command>: <message>` (no command: `buildscope: …`) and exits (2: bad usage or configuration). */
export function fail(command: string, message: string, code = 2): never {
  process.stderr.write(`buildscope${command ? ` ${command}` : ''}: ${message}\n`);
  process.exit(code);
}
