// The cause a build failure carries (BuildFinished.failures[].cause; docs/send-your-builds.md,
// "Tests, console output and failure causes"), read defensively: the data of known events is not
// validated at ingest, so a member of the wrong type is left out rather than shown wrong.

export interface Diagnostic {
  readonly file: string;
  readonly line: number | null;
  readonly column: number | null;
  /** `error` or `warning` as the tool says; null when it does not. */
  readonly severity: string | null;
  readonly message: string;
}

export interface FailureCause {
  readonly type: string | null;
  readonly message: string | null;
  readonly stackTrace: string | null;
  /** A compiler's errors, in the order it gave them. */
  readonly diagnostics: readonly Diagnostic[];
  /** The end of a failed command's error output. */
  readonly outputTail: string | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function diagnosticOf(v: unknown): Diagnostic[] {
  if (!isObject(v)) return [];
  const file = str(v['file']);
  const message = str(v['message']);
  if (file === null || message === null) return [];
  return [{ file, line: int(v['line']), column: int(v['column']), severity: str(v['severity']), message }];
}

/** The cause of a failure entry, or null when it has none (or nothing readable). */
export function causeOf(v: unknown): FailureCause | null {
  if (!isObject(v)) return null;
  const cause: FailureCause = {
    type: str(v['type']),
    message: str(v['message']),
    stackTrace: str(v['stackTrace']),
    diagnostics: Array.isArray(v['diagnostics']) ? v['diagnostics'].flatMap(diagnosticOf) : [],
    outputTail: str(v['outputTail']),
  };
  const empty = cause.type === null && cause.message === null && cause.stackTrace === null && cause.diagnostics.length === 0 && cause.outputTail === null;
  return empty ? null : cause;
}
