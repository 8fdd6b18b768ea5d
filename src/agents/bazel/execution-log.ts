// Why a Bazel action missed the cache, from Bazel's execution log (`--execution_log_json_file`):
// each spawn the build ran or fetched from the remote cache becomes one TaskInputs event, the
// record the Gradle agent sends for the comparison's cache-miss rule (src/services/task-inputs.ts),
// so that two builds in which an action came from the remote cache once and ran once name the
// inputs that differ (docs/send-your-builds.md, "Why a Bazel action missed the cache").
//
// Bazel 4.2.3 writes one pretty-printed JSON object per spawn, concatenated (not an array, not one
// per line), with `commandArgs`, `environmentVariables`, `inputs` (path and digest),
// `listedOutputs`, `mnemonic`, `progressMessage`, `runner`, `remoteCacheHit`, ...; it names no
// target and no action key. A spawn is keyed by the target its progress message names, its
// mnemonic and its first output: the same action in two builds has the same key.

import { createHash } from 'node:crypto';
import { JSONParser } from '@streamparser/json';
import type { BuildEvent } from '../../store/types.js';
import { event } from '../common-build.js';
import { agentContract } from '../contract.js';

/** The spawns of an execution log: each top-level JSON object, in order; anything else (text that is no JSON, a value that is no object, a log cut short) is an error. */
export function parseExecutionLog(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  // Concatenated values (separator ''), each emitted whole at the root ($) as it ends.
  const parser = new JSONParser({ separator: '', paths: ['$'], keepStack: false });
  parser.onValue = ({ value }) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SyntaxError('a value that is not an object');
    out.push(value as Record<string, unknown>);
  };
  try {
    parser.write(text);
  } catch (e) {
    throw new SyntaxError(`not an execution log: ${(e as Error).message}`);
  }
  try {
    parser.end();
  } catch {
    throw new SyntaxError('not an execution log: it ends inside a value (cut short?)');
  }
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The label a progress message names (`Executing genrule //pkg:name`, `Testing //pkg:t`, `@repo//x:y`), if any. */
export function labelOf(progressMessage: string | undefined): string | undefined {
  const m = progressMessage === undefined ? null : /(?:^|\s)((?:@[\w.~-]*)?\/\/[^\s:]*(?::[^\s;,]+)?)/.exec(progressMessage);
  return m?.[1];
}

/** The name a spawn's record goes by: `<label> <mnemonic> <first output>`, the label left out when the message names none. */
export function spawnKey(spawn: Record<string, unknown>): string | undefined {
  const mnemonic = str(spawn['mnemonic']) ?? '';
  const output = str(arr(spawn['listedOutputs'])[0]) ?? str(obj(arr(spawn['actualOutputs'])[0])['path']);
  if (output === undefined) return undefined;
  const label = labelOf(str(spawn['progressMessage']));
  return [label, mnemonic, output].filter((p) => p !== undefined && p !== '').join(' ');
}

/** The input named for the spawn's files, and for its command line. */
export const FILES_INPUT = 'inputs';
export const COMMAND_INPUT = 'command line';
/** Each environment variable is an input of its own: `env PATH`. */
export const ENV_INPUT_PREFIX = 'env ';

/**
 * TaskInputs events, one per spawn that has an output: `path` = the spawn's key; `inputs` =
 * `inputs` (a hash of all its input files' paths and digests), `command line` (a hash of its
 * arguments) and `env NAME` per environment variable (a hash of its value: values are not sent);
 * `files.inputs` = each input file and its digest, bounded like the Gradle agent's (taskInputFiles
 * per spawn, buildInputFiles per build, the rest counted in `filesOmitted`); `outputs` = its listed
 * outputs; `remoteCacheHit`; `cacheKey` null (Bazel 4.2.3 logs no action key).
 */
export function spawnInputEvents(
  spawns: readonly Record<string, unknown>[],
  timestamp: number,
  bounds: { readonly taskInputFiles: number; readonly buildInputFiles: number } = agentContract().bounds,
): BuildEvent[] {
  const events: BuildEvent[] = [];
  let buildFilesLeft = bounds.buildInputFiles;
  let id = 0;
  for (const spawn of spawns) {
    const path = spawnKey(spawn);
    if (path === undefined) continue;
    const files: [string, string][] = [];
    for (const input of arr(spawn['inputs'])) {
      const p = str(obj(input)['path']);
      if (p !== undefined) files.push([p, str(obj(obj(input)['digest'])['hash']) ?? '']);
    }
    files.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    const inputs: Record<string, string> = {
      [FILES_INPUT]: sha256(files.map(([p, h]) => `${p}\u0000${h}`).join('\n')),
      [COMMAND_INPUT]: sha256(JSON.stringify(arr(spawn['commandArgs']).filter((a) => typeof a === 'string'))),
    };
    for (const v of arr(spawn['environmentVariables'])) {
      const name = str(obj(v)['name']);
      if (name !== undefined) inputs[ENV_INPUT_PREFIX + name] = sha256(str(obj(v)['value']) ?? '');
    }
    const listed = Math.max(0, Math.min(files.length, bounds.taskInputFiles, buildFilesLeft));
    buildFilesLeft -= listed;
    const omitted = files.length - listed;
    const label = labelOf(str(spawn['progressMessage']));
    events.push(
      event(
        'TaskInputs',
        {
          id: ++id,
          path,
          ...(label !== undefined ? { target: label } : {}),
          mnemonic: str(spawn['mnemonic']) ?? '',
          cacheKey: null,
          inputs,
          files: { [FILES_INPUT]: Object.fromEntries(files.slice(0, listed)) },
          ...(omitted > 0 ? { filesOmitted: { [FILES_INPUT]: omitted } } : {}),
          outputs: arr(spawn['listedOutputs']).filter((o): o is string => typeof o === 'string'),
          remoteCacheHit: spawn['remoteCacheHit'] === true,
          ...(str(spawn['runner']) !== undefined ? { runner: str(spawn['runner']) } : {}),
        },
        timestamp,
      ),
    );
  }
  return events;
}
