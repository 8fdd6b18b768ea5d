// Causes read from the console for failures whose agent sent none (src/services/failure-cause.ts):
// a Python error with its file and line (pytest's collection error, as pytest 7 prints it), the
// errors of javac, gcc and tsc; a failure with its own cause keeps it.

import { describe, expect, it } from 'vitest';
import { consoleDiagnostics, withConsoleCauses, type FailureCause } from '../../src/services/failure-cause.js';

const PYTEST_COLLECTION_ERROR = `
==================================== ERRORS ====================================
_______________________ ERROR collecting test_broken.py ________________________
/usr/lib/python3/dist-packages/_pytest/python.py:618: in _importtestmodule
    mod = import_path(self.path, mode=importmode, root=self.config.rootpath)
/usr/lib/python3.11/ast.py:50: in parse
    return compile(source, filename, mode, flags,
E     File "/tmp/work/broken/test_broken.py", line 1
E       def test_x(:
E                  ^
E   SyntaxError: invalid syntax
=========================== short test summary info ============================
ERROR test_broken.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 1.18s`.split('\n');

describe('causes from the console', () => {
  it("reads Python's error where a traceback's file is followed by it, not the frames before", () => {
    const traceback = ['Traceback (most recent call last):', '  File "/app/run.py", line 9, in <module>', '    main()', '  File "/app/lib.py", line 3, in main', '    return {}["k"]', "KeyError: 'k'"];
    expect(consoleDiagnostics(PYTEST_COLLECTION_ERROR)).toEqual([{ file: '/tmp/work/broken/test_broken.py', line: 1, column: null, severity: 'error', message: 'SyntaxError: invalid syntax' }]);
    expect(consoleDiagnostics(traceback)).toEqual([{ file: '/app/lib.py', line: 3, column: null, severity: 'error', message: "KeyError: 'k'" }]);
  });

  it('reads the errors of javac, gcc and tsc, each once, and leaves other lines', () => {
    const lines = [
      'src/main/java/demo/Broken.java:2: error: cannot find symbol',
      'src/main/java/demo/Broken.java:2: error: cannot find symbol',
      'greet.c:7:12: error: expected ‘;’ before ‘}’ token',
      'src/index.ts(4,7): error TS2322: Type \'string\' is not assignable to type \'number\'.',
      'Compiling 3 files, 0 errors',
      'src/a.ts:1:1: warning: unused',
    ];
    expect(consoleDiagnostics(lines)).toEqual([
      { file: 'src/main/java/demo/Broken.java', line: 2, column: null, severity: 'error', message: 'cannot find symbol' },
      { file: 'greet.c', line: 7, column: 12, severity: 'error', message: 'expected ‘;’ before ‘}’ token' },
      { file: 'src/index.ts', line: 4, column: 7, severity: 'error', message: "TS2322: Type 'string' is not assignable to type 'number'." },
    ]);
  });

  it('gives a failure without a cause the errors of the file it names, the rest to the first; a failure with a cause keeps it', () => {
    const own: FailureCause = { type: 'X', message: null, stackTrace: null, diagnostics: [], outputTail: 'tail' };
    const lines = ['E     File "/w/test_a.py", line 2', 'E   IndentationError: unexpected indent', 'E     File "/w/test_b.py", line 5', 'E   SyntaxError: invalid syntax', 'util.c:1:1: error: unknown type name'];
    const failures = [
      { classification: 'non-verification', message: 'Task failed', cause: own },
      { classification: 'non-verification', message: 'Collection of test_a.py failed', cause: null },
      { classification: 'non-verification', message: 'Collection of test_b.py failed', cause: null },
    ];
    const out = withConsoleCauses(failures, () => lines);
    expect(out[0]!.cause).toBe(own);
    expect(out[1]!.cause!.diagnostics.map((d) => `${d.file}:${d.line} ${d.message}`)).toEqual(['/w/test_a.py:2 IndentationError: unexpected indent', 'util.c:1 unknown type name']);
    expect(out[2]!.cause!.diagnostics.map((d) => `${d.file}:${d.line} ${d.message}`)).toEqual(['/w/test_b.py:5 SyntaxError: invalid syntax']);
    // Nothing to read, or nothing to give it to: the failures as they were, the console not read.
    let read = 0;
    expect(withConsoleCauses([failures[0]!], () => (read++, lines))).toEqual([failures[0]]);
    expect(read).toBe(0);
    expect(withConsoleCauses(failures, () => ['all good'])).toEqual(failures);
  });
});
