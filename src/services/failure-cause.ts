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

// A compiler's or interpreter's errors as the console shows them, for failures whose agent sent no
// cause (pytest's collection errors: the module that did not import, and why, are only in its
// output). Python's `File "<path>", line <n>` followed within a few lines by `<Type>Error: <message>`
// (pytest prefixes its report's lines with `E`); `<path>:<line>[:<column>]: error: <message>` of
// javac, gcc and clang; `<path>(<line>,<column>): error TS<n>: <message>` of tsc.
const PYTHON_FILE = /^(?:E\s+)?\s*File "([^"]+)", line (\d+)/;
const PYTHON_ERROR = /^(?:E\s+)?\s*([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$/;
const COLON_ERROR = /^((?:[A-Za-z]:)?[^\s:()][^:()]*):(\d+):(?:(\d+):)? (?:fatal )?error: (.+)$/;
const TSC_ERROR = /^([^\s()][^()]*)\((\d+),(\d+)\): error (TS\d+: .+)$/;
/** How far after a Python file line its error may come (the source line, its caret, a blank). */
const PYTHON_LOOKAHEAD = 6;
/** Diagnostics read from one console at most: the first ones say why. */
const CONSOLE_DIAGNOSTICS = 20;

/** The errors the console's lines (plain text) name with file and line, in order. */
export function consoleDiagnostics(lines: readonly string[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const add = (d: Diagnostic) => {
    const key = `${d.file}:${d.line}:${d.column}:${d.message}`;
    if (!seen.has(key)) out.push(d);
    seen.add(key);
  };
  for (let i = 0; i < lines.length && out.length < CONSOLE_DIAGNOSTICS; i++) {
    const line = lines[i]!;
    const py = PYTHON_FILE.exec(line);
    if (py) {
      // A traceback names many files: the one its error follows closely is where it is.
      for (let j = i + 1; j < Math.min(lines.length, i + 1 + PYTHON_LOOKAHEAD); j++) {
        if (PYTHON_FILE.test(lines[j]!)) break;
        const e = PYTHON_ERROR.exec(lines[j]!);
        if (e) {
          add({ file: py[1]!, line: Number(py[2]), column: null, severity: 'error', message: `${e[1]}: ${e[2]}` });
          break;
        }
      }
      continue;
    }
    const c = COLON_ERROR.exec(line) ?? TSC_ERROR.exec(line);
    if (c) add({ file: c[1]!, line: Number(c[2]), column: c[3] !== undefined ? Number(c[3]) : null, severity: 'error', message: c[4]! });
  }
  return out;
}

/**
 * The failures with a cause read from the console for those without one: the diagnostics of a
 * file the failure's message names go with it; those no failure names, with the first failure
 * without a cause. A failure with a cause keeps its own.
 */
export function withConsoleCauses<F extends { readonly message: string; readonly cause: FailureCause | null }>(failures: readonly F[], consoleLines: () => readonly string[]): F[] {
  if (!failures.some((f) => f.cause === null)) return [...failures];
  const diagnostics = consoleDiagnostics(consoleLines());
  if (diagnostics.length === 0) return [...failures];
  const base = (file: string) => file.slice(file.lastIndexOf('/') + 1);
  const named = (f: F, d: Diagnostic) => f.message.includes(d.file) || (base(d.file) !== '' && f.message.includes(base(d.file)));
  const causeless = failures.filter((f) => f.cause === null);
  const mine = new Map<F, Diagnostic[]>(causeless.map((f) => [f, []]));
  for (const d of diagnostics) mine.get(causeless.find((f) => named(f, d)) ?? causeless[0]!)!.push(d);
  return failures.map((f) => {
    const found = mine.get(f);
    return found === undefined || found.length === 0 ? f : { ...f, cause: { type: null, message: null, stackTrace: null, diagnostics: found, outputTail: null } };
  });
}
