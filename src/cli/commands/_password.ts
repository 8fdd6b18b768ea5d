// Where a command gets a password: a hidden prompt on a terminal, standard input with
// --password-stdin (scripts), or --password (visible in the shell history and the process list;
// kept for compatibility). Files starting with `_` are not commands.

import { fail } from './_fail.js';

export interface PasswordOptions {
  password?: string;
  passwordStdin?: boolean;
}

export async function readPassword(command: string, opts: PasswordOptions, who: string): Promise<string> {
  if (opts.password !== undefined && opts.passwordStdin) fail(command, 'give either --password or --password-stdin, not both');
  if (opts.password !== undefined) return opts.password;
  if (opts.passwordStdin) {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    // One line, as `echo "$PW" | ...` or a file with a final newline gives it.
    const password = text.replace(/\r?\n$/, '');
    if (password === '') fail(command, '--password-stdin: standard input holds no password');
    return password;
  }
  if (!process.stdin.isTTY) fail(command, 'no password: pipe it in with --password-stdin, or run on a terminal to be asked for it');
  const { read } = await import('read');
  const ask = async (prompt: string): Promise<string> => {
    try {
      return await read({ prompt, silent: true, replace: '', output: process.stderr });
    } catch {
      // Ctrl-C or Ctrl-D at the prompt.
      process.stderr.write('\n');
      fail(command, 'cancelled', 130);
    }
  };
  // The terminal closed (end of input) while asking: nothing else keeps the process alive.
  const closed = (): never => fail(command, 'no password was typed (end of input)');
  process.once('beforeExit', closed);
  const first = await ask(`Password for ${who}: `);
  if (first === '') fail(command, 'the password must not be empty');
  const again = await ask('The same password again: ');
  process.off('beforeExit', closed);
  if (again !== first) fail(command, 'the two passwords differ; nothing was changed');
  return first;
}
