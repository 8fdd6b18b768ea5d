// `buildscope ingest-bep FILE`: a `--build_event_json_file` file as one targetbuild build, stored
// in a local database or sent to a server (for sites that cannot open a gRPC port to Buildscope).

import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { AgentBuild } from '../common-build.js';
import { bepToBuild, BepError, buildIdFromInvocation, invocationIdOf, parseBepJson } from '../../bes/bep-build.js';
import { parseExecutionLog, spawnInputEvents } from './execution-log.js';

/**
 * Reads and converts an event file; throws BepError (or a file error) with a message for people.
 * With `executionLog` (Bazel's `--execution_log_json_file` of the same invocation), each spawn it
 * logged is added as a TaskInputs event (execution-log.ts); a log that cannot be read or parsed is
 * left out and said through `warn`, and the build is made without it.
 */
export async function buildFromEventFile(file: string, options: { readonly executionLog?: string; readonly warn?: (message: string) => void } = {}): Promise<AgentBuild> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new BepError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  const events = parseBepJson(text);
  if (events.length === 0) throw new BepError(`${file} has no events; write it with bazel ... --build_event_json_file=${file}`);
  const invocation = invocationIdOf(events);
  if (invocation === undefined) throw new BepError(`${file}: the event stream has no BuildStarted event with an invocation ID`);
  const build = bepToBuild(events, buildIdFromInvocation(invocation), { readUri: readLocalFile });
  if (options.executionLog === undefined) return build;
  let spawns: Record<string, unknown>[];
  try {
    spawns = parseExecutionLog(await readFile(options.executionLog, 'utf8'));
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    options.warn?.(`the execution log ${options.executionLog} was not read (${why}); the build is made without its actions' inputs`);
    return build;
  }
  // The file has no times: the actions' records are dated with the build's end, before it.
  const last = build.events.at(-1)!;
  return { ...build, events: [...build.events.slice(0, -1), ...spawnInputEvents(spawns, last.timestamp), last] };
}

/** Largest test report or log read: a larger one is left out (its test stays one test per target). */
const MAX_TEST_FILE_BYTES = 8 * 1024 * 1024;

/**
 * The content of a `file://` URI on this machine (the test reports and logs Bazel names), when it
 * is there and not too large; anything else (another machine's path, a `bytestream://` URI of a
 * remote cache) is not read here.
 */
export function readLocalFile(uri: string): string | undefined {
  if (!uri.startsWith('file://')) return undefined;
  try {
    const path = fileURLToPath(uri);
    if (statSync(path).size > MAX_TEST_FILE_BYTES) return undefined;
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
