// Secrets kept out of the configuration file: a setting `xFile` names a file holding the secret of
// `x` (a password, a token). The configuration file tends to live in version control and config
// management, readable by more people than the secret should be; the secret's own file can be
// readable by the server alone (a mounted Kubernetes or Docker secret, a file of systemd's
// LoadCredential). Every such setting is read here, once, when the configuration is parsed.

import { readFileSync } from 'node:fs';
import { ConfigError, faultAt, type Fault } from './schema-check.js';

/** The schema of an `xFile` setting. */
export const secretFileSetting = (of: string) =>
  ({ description: `File holding ${of} (read once at start, one trailing newline dropped); keep it readable by the server only.`, type: 'string', minLength: 1 }) as const;

/**
 * The secret in `file`, without its trailing newline (what `echo` and most editors leave).
 * @param at path of the setting from the top of the file, e.g. ['bes', 'cacheNodes', 0, 'passwordFile']
 * @throws ConfigError naming the setting and the file when it cannot be read or holds nothing
 */
export function readSecretFile(file: string, at: readonly (string | number)[]): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'a directory, not a file' : (e as Error).message;
    throw new ConfigError([faultAt(at, `cannot read ${file}: ${why}`)]);
  }
  const secret = text.replace(/\r?\n$/, '');
  if (secret === '') throw new ConfigError([faultAt(at, `${file} is empty`)]);
  return secret;
}

/**
 * Faults of a pair `name` / `nameFile` of which exactly one must be given (`required`) or at most
 * one; `at` is the path of the object holding them, relative to its section.
 */
export function secretPairFaults(settings: object, name: string, at: readonly (string | number)[], required: boolean): Fault[] {
  const o = settings as Readonly<Record<string, unknown>>;
  const file = `${name}File`;
  if (o[name] !== undefined && o[file] !== undefined) return [faultAt(at, `give either ${name} or ${file}, not both`)];
  if (required && o[name] === undefined && o[file] === undefined) return [faultAt(at, `give ${name} or ${file}`)];
  return [];
}
