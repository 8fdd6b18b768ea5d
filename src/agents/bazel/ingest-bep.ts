// `buildscope ingest-bep FILE`: a `--build_event_json_file` file as one targetbuild build, stored
// in a local database or sent to a server (for sites that cannot open a gRPC port to Buildscope).

import { readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { AgentBuild } from '../common-build.js';
import { bepToBuild, BepError, buildIdFromInvocation, invocationIdOf, parseBepJson } from '../../bes/bep-build.js';

/** Reads and converts an event file; throws BepError (or a file error) with a message for people. */
export async function buildFromEventFile(file: string): Promise<AgentBuild> {
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
  return bepToBuild(events, buildIdFromInvocation(invocation), { readUri: readLocalFile });
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
