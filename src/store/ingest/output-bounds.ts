// Bounds on the free output a build carries (docs/send-your-builds.md, "Tests, console output and
// failure causes"): its console log, each test's output, stack traces and the tail of a failed
// command's output. Applied by the ingest to every line before it is hashed and stored
// (prepare.ts), after redaction, so that a secret is never cut in half and so left unmatched.
// A build of an agent that captures a runaway log is stored with the start of it and a mark that
// it was cut, instead of taking the server's disk or the build page's memory.

import type { BuildEvent } from '../types.js';

export interface OutputBounds {
  /** UTF-8 bytes of ConsoleOutput text per ingest line (server setting `limits.consoleBytesPerBuild`). */
  readonly consoleBytes: number;
  /** UTF-8 bytes of TestOutput text per test (`id`). */
  readonly testOutputBytes: number;
  /** UTF-8 bytes of each stack trace (TestFinished.failure.stackTrace, BuildFinished.failures[].cause.stackTrace); the start is kept. */
  readonly stackTraceBytes: number;
  /** UTF-8 bytes of each BuildFinished.failures[].cause.outputTail; the end is kept. */
  readonly outputTailBytes: number;
}

const KiB = 1024;

export const DEFAULT_OUTPUT_BOUNDS: OutputBounds = {
  consoleBytes: 4 * KiB * KiB,
  testOutputBytes: 64 * KiB,
  stackTraceBytes: 16 * KiB,
  outputTailBytes: 16 * KiB,
};

/** What the ingest appends where it cut a text, so a reader sees the text is not whole. */
export const CUT_MARK = '… (cut at ingest)';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The longest start of `text` within `max` UTF-8 bytes, ending at a line end when one is in it. */
export function headOf(text: string, max: number): string {
  if (max <= 0) return '';
  // Decoding cuts a character split by the byte bound into U+FFFD: drop it.
  let head = Buffer.from(text, 'utf8').subarray(0, max).toString('utf8');
  if (head.endsWith('\uFFFD') && !text.startsWith(head)) head = head.slice(0, -1);
  const nl = head.lastIndexOf('\n');
  return nl > 0 ? head.slice(0, nl + 1) : head;
}

/** The shortest end of `text` within `max` UTF-8 bytes, starting after a line end when one is in it. */
export function tailOf(text: string, max: number): string {
  if (max <= 0) return '';
  const b = Buffer.from(text, 'utf8');
  let tail = b.subarray(Math.max(0, b.length - max)).toString('utf8');
  if (tail.startsWith('\uFFFD') && !text.endsWith(tail)) tail = tail.slice(1);
  const nl = tail.indexOf('\n');
  return nl >= 0 && nl < tail.length - 1 ? tail.slice(nl + 1) : tail;
}

type Data = Readonly<Record<string, unknown>>;

function boundedHead(text: unknown, max: number): unknown {
  return typeof text === 'string' && bytes(text) > max ? headOf(text, Math.max(0, max - bytes(CUT_MARK) - 1)) + '\n' + CUT_MARK : text;
}

function boundedFailure(failure: unknown, bounds: OutputBounds): unknown {
  if (typeof failure !== 'object' || failure === null || Array.isArray(failure)) return failure;
  const f = failure as Data;
  const stackTrace = boundedHead(f['stackTrace'], bounds.stackTraceBytes);
  const tail = f['outputTail'];
  const outputTail = typeof tail === 'string' && bytes(tail) > bounds.outputTailBytes ? CUT_MARK + '\n' + tailOf(tail, Math.max(0, bounds.outputTailBytes - bytes(CUT_MARK) - 1)) : tail;
  if (stackTrace === f['stackTrace'] && outputTail === tail) return failure;
  return { ...f, ...(stackTrace !== undefined ? { stackTrace } : {}), ...(outputTail !== undefined ? { outputTail } : {}) };
}

function boundedFailures(data: Data, bounds: OutputBounds): Data {
  const failures = data['failures'];
  if (!Array.isArray(failures)) return data;
  let changed = false;
  const out = failures.map((f: unknown) => {
    if (typeof f !== 'object' || f === null || Array.isArray(f)) return f;
    const cause = (f as Data)['cause'];
    const bounded = boundedFailure(cause, bounds);
    if (bounded === cause) return f;
    changed = true;
    return { ...(f as Data), cause: bounded };
  });
  return changed ? { ...data, failures: out } : data;
}

/**
 * The events with their output bounded: the same array when nothing was over a bound (the common
 * build costs a length check per text). Console chunks after the bound are dropped and the one
 * that crosses it is cut at a line end and marked `truncated: true`.
 */
export function boundOutput(events: readonly BuildEvent[], bounds: OutputBounds): readonly BuildEvent[] {
  let out: BuildEvent[] | undefined;
  let consoleLeft = bounds.consoleBytes;
  let consoleCut = false;
  const testOutput = new Map<string, number>();
  const replace = (i: number, e: BuildEvent | undefined): void => {
    out ??= events.slice();
    // Dropped events are left as holes and filtered out at the end, so indexes stay put.
    out[i] = e as BuildEvent;
  };
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    switch (e.type.eventType) {
      case 'ConsoleOutput': {
        const text = e.data['text'];
        if (typeof text !== 'string') break;
        if (consoleCut) {
          replace(i, undefined);
          break;
        }
        const n = bytes(text);
        if (n <= consoleLeft) {
          consoleLeft -= n;
          break;
        }
        consoleCut = true;
        replace(i, { ...e, data: { ...e.data, text: headOf(text, consoleLeft), truncated: true } });
        consoleLeft = 0;
        break;
      }
      case 'TestOutput': {
        const text = e.data['text'];
        if (typeof text !== 'string') break;
        const key = String(e.data['id']);
        const left = testOutput.get(key) ?? bounds.testOutputBytes;
        const n = bytes(text);
        if (n <= left) {
          testOutput.set(key, left - n);
          break;
        }
        testOutput.set(key, 0);
        if (left <= 0) replace(i, undefined);
        else replace(i, { ...e, data: { ...e.data, text: headOf(text, left), truncated: true } });
        break;
      }
      case 'TestFinished': {
        const failure = boundedFailure(e.data['failure'], bounds);
        if (failure !== e.data['failure']) replace(i, { ...e, data: { ...e.data, failure } });
        break;
      }
      case 'BuildFinished': {
        const data = boundedFailures(e.data, bounds);
        if (data !== e.data) replace(i, { ...e, data });
        break;
      }
      default:
        break;
    }
  }
  return out === undefined ? events : out.filter((e) => e !== undefined);
}
