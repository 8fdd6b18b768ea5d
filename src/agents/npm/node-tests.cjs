// The tests of node's own test runner (node:test), noted in the record file of a recorded build
// (BUILDSCOPE_JS_EVENTS) without changing the command: no reporter is added and no option changed,
// so what the runner prints and its exit code stay the runner's. preload.cjs loads this file into
// the Node processes of a recorded build that are not package managers.
//
// How the tests are seen: node's runner builds the reporters of a process by composing its root
// test stream with each reporter through `stream.compose` (internal/test_runner/utils.js), and
// that module is loaded only when a test file first loads node:test, after this preload. Wrapping
// `compose` therefore hands over the root stream, whose documented events (`test:start`,
// `test:dequeue`, `test:pass`, `test:fail`) are listened to; the call itself goes on unchanged.
// This works where the tests run: each file's child process under `node --test` (node runs every
// file in its own process) and a test file run as `node file.test.js`. The `node --test` process
// itself loads the runner before any preload, so it is not hooked; it only names the files it
// runs (a direct child of it is a test file) and the JUnit reports its own reporters write.
// docs/send-your-builds.md says what was measured and what did not work.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** Set by the `node --test` process: its children with this parent are the test files. */
const RUNNER = 'BUILDSCOPE_NODE_TEST_RUNNER';
/** At most this many tests are noted by one process, as a JUnit report is read up to its first 10,000 cases. */
const MAX_TESTS = 10_000;

/** An appending writer of record lines: one write(2) per line on an O_APPEND file, so that the concurrent test processes' lines never mix. */
function recordWriter(file) {
  let fd;
  return (entry) => {
    try {
      if (fd === undefined) fd = fs.openSync(file, 'a', 0o600);
      fs.writeSync(fd, JSON.stringify(entry) + '\n');
    } catch {
      // The record is best effort; the tests go on.
    }
  };
}

/** The contract's bounds of a failure message and a stack trace, read once (the first failure). */
let bounds;
function boundsOf(contractFile) {
  if (bounds === undefined) {
    try {
      const b = JSON.parse(fs.readFileSync(contractFile(), 'utf8')).bounds;
      bounds = { message: b.messageChars, stackTrace: b.stackTraceChars };
    } catch {
      bounds = { message: 8192, stackTrace: 16384 };
    }
  }
  return bounds;
}

const cut = (s, max) => (s.length > max ? `${s.slice(0, max)}… (${s.length - max} more characters)` : s);

function textOf(value) {
  if (typeof value === 'string') return value;
  try {
    return require('node:util').inspect(value, { depth: 3, breakLength: Infinity });
  } catch {
    return String(value);
  }
}

/**
 * The failure of a test:fail event: node wraps what failed (`cause`: the assertion error, the
 * thrown value, or a text such as "test timed out after 10ms") in an ERR_TEST_FAILURE whose
 * `failureType` says how it failed (`testCodeFailure`, `hookFailed`, `cancelledByParent`, ...).
 */
function failureOf(error, contractFile) {
  const { message, stackTrace } = boundsOf(contractFile);
  const cause = error && error.cause !== undefined ? error.cause : error;
  if (cause instanceof Error || (cause !== null && typeof cause === 'object' && typeof cause.message === 'string')) {
    const type = typeof cause.name === 'string' && cause.name !== '' ? cause.name : error && error.failureType;
    const stack = typeof cause.stack === 'string' ? cause.stack : undefined;
    return { ...(type ? { type } : {}), message: cut(cause.message, message), ...(stack ? { stackTrace: cut(stack, stackTrace) } : {}) };
  }
  const type = error && typeof error.failureType === 'string' ? error.failureType : undefined;
  return { ...(type ? { type } : {}), message: cut(textOf(cause), message) };
}

/** `todo` or `todo: why`, `why` for a skip with a reason (a bare skip has none). */
function skipReasonOf(data) {
  if (data.todo !== undefined && data.todo !== false) return typeof data.todo === 'string' && data.todo !== '' ? `todo: ${data.todo}` : 'todo';
  return typeof data.skip === 'string' && data.skip !== '' ? data.skip : undefined;
}

/** A test's file relative to the process's working directory, which is the package's for a script. */
const fileName = (file) => (typeof file === 'string' && file !== '' ? path.relative(process.cwd(), file.startsWith('file:') ? require('node:url').fileURLToPath(file) : file) || file : undefined);

/**
 * Notes the tests of one root test stream. Names come from `test:start` (emitted in the order the
 * tests are defined, a parent before its subtests): a test's suite is its file and its parents,
 * `file > describe > parent`. A test with subtests is a suite, noted only when it failed for a
 * reason of its own (a hook, its own assertion), not because a subtest did. Times: a test starts
 * when it is dequeued and lasts its `duration_ms`.
 */
function observe(root, write, contractFile, mainFile) {
  const parents = [];
  const hasSubtests = [];
  const dequeued = new Map();
  let noted = 0;
  const key = (d) => `${d.nesting}\0${d.file}\0${d.line}:${d.column}\0${d.name}`;
  root.on('test:dequeue', (d) => {
    const k = key(d);
    if (!dequeued.has(k)) dequeued.set(k, []);
    dequeued.get(k).push(Date.now());
  });
  root.on('test:start', (d) => {
    parents.length = d.nesting;
    parents[d.nesting] = d.name;
    hasSubtests[d.nesting] = false;
  });
  const finished = (failed) => (d) => {
    try {
      if (d.nesting > 0) hasSubtests[d.nesting - 1] = true;
      const details = d.details || {};
      const error = details.error;
      const parent = hasSubtests[d.nesting] === true || details.type === 'suite';
      const starts = dequeued.get(key(d));
      const now = Date.now();
      const duration = Math.max(0, Math.round(Number(details.duration_ms) || 0));
      const start = (starts && starts.shift()) ?? now - duration;
      if (parent && !(failed && error && error.failureType !== 'subtestsFailed')) return;
      if (++noted > MAX_TESTS) return;
      const file = fileName(d.file) ?? fileName(mainFile) ?? '';
      const suite = [file, ...parents.slice(0, d.nesting)].filter((s) => s !== '').join(' > ');
      const skipReason = skipReasonOf(d);
      const skipped = (d.todo !== undefined && d.todo !== false) || (d.skip !== undefined && d.skip !== false);
      const outcome = skipped ? 'skipped' : failed ? 'failed' : 'passed';
      write({
        kind: 'test',
        suite,
        name: String(d.name),
        outcome,
        start,
        end: start + duration,
        ...(outcome === 'failed' ? { failure: failureOf(error, contractFile) } : {}),
        ...(outcome === 'skipped' && skipReason !== undefined ? { skipReason } : {}),
      });
    } catch {
      // A test the record cannot hold is left out; the run goes on.
    }
  };
  root.on('test:pass', finished(false));
  root.on('test:fail', finished(true));
}

/**
 * A file `node --test` ran that never reached node:test (a syntax error, a crash, a file with no
 * tests): node reports it as one test named after the file, passed when its process exits 0.
 */
function noteFileOnExit(write, contractFile, file, seen) {
  let uncaught;
  process.on('uncaughtExceptionMonitor', (e) => {
    uncaught ??= e;
  });
  process.on('exit', (code) => {
    if (seen()) return;
    const t = Date.now();
    const start = Math.round(t - process.uptime() * 1000);
    const failure = code === 0 ? undefined : uncaught !== undefined ? failureOf(uncaught, contractFile) : { message: `exited with code ${code}` };
    write({ kind: 'test', suite: '', name: fileName(file) ?? String(file), outcome: failure ? 'failed' : 'passed', start, end: t, ...(failure ? { failure } : {}) });
  });
}

/** The JUnit reports the `node --test` process's own reporters write (`--test-reporter=junit --test-reporter-destination=FILE`). */
function junitDestinations(execArgv) {
  const reporters = [];
  const destinations = [];
  for (let i = 0; i < execArgv.length; i++) {
    const m = /^--test-reporter(-destination)?(?:=(.*))?$/.exec(execArgv[i]);
    if (!m) continue;
    const value = m[2] !== undefined ? m[2] : execArgv[++i];
    (m[1] ? destinations : reporters).push(value);
  }
  return reporters.flatMap((r, i) => (r === 'junit' && destinations[i] && destinations[i] !== 'stdout' && destinations[i] !== 'stderr' ? [path.resolve(destinations[i])] : []));
}

/** Installs what this process needs: the runner notes its files and reports; a process that runs tests notes them. */
function install(recordFile, contractFile) {
  const write = recordWriter(recordFile);
  const context = process.env.NODE_TEST_CONTEXT;
  if (context === undefined && process.execArgv.includes('--test')) {
    process.env[RUNNER] = String(process.pid);
    const reports = junitDestinations(process.execArgv);
    if (reports.length > 0) write({ kind: 'node-test-reports', files: reports });
    return;
  }
  const fileOfRunner = context !== undefined && process.env[RUNNER] === String(process.ppid);
  // A process a test started (a CLI under test) inherits the test's context: its tests, if any,
  // are the test's business, as node shows them only as that test's output.
  if (context !== undefined && !fileOfRunner) return;
  const stream = require('node:stream');
  const original = stream.compose;
  let seen = false;
  const roots = new WeakSet();
  stream.compose = function compose(...streams) {
    try {
      const root = streams[0];
      if (root && root.constructor && root.constructor.name === 'TestsStream' && !roots.has(root)) {
        roots.add(root);
        seen = true;
        observe(root, write, contractFile, process.argv[1]);
      }
    } catch {
      // Never in the way of the runner.
    }
    return original.apply(this, streams);
  };
  if (fileOfRunner) noteFileOnExit(write, contractFile, process.argv[1], () => seen);
}

module.exports = { install, junitDestinations };
