// The tests of a `buildscope run` command, from the JUnit XML reports its runner wrote (jest-junit,
// vitest's and mocha's junit reporters, node --test --test-reporter=junit): the `junit` setting
// names them (comma-separated paths or globs, `**` for any depth), and only the reports written
// while the command ran are read, so that an old report is not taken for this build's tests.
// node's own runner is recorded without a report (node-tests.cjs); run.ts leaves out the reports
// its junit reporter wrote then.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { BuildEvent } from '../../store/types.js';
import { event } from '../common-build.js';
import { parseJUnitXml } from '../junit.js';

/** At most this many files are read, and directories walked, for one build. */
const MAX_FILES = 1000;
const MAX_DIRS = 10_000;

/** A glob segment as a regular expression: `*` and `?` within one path segment. */
function segmentRegex(segment: string): RegExp {
  const body = segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}

/** Whether a path relative to the pattern's base (segments) matches the pattern's segments (`**` any number of them). */
export function globMatches(pattern: readonly string[], path: readonly string[]): boolean {
  if (pattern.length === 0) return path.length === 0;
  const [head, ...rest] = pattern;
  if (head === '**') {
    for (let i = 0; i <= path.length; i++) if (globMatches(rest, path.slice(i))) return true;
    return false;
  }
  return path.length > 0 && segmentRegex(head!).test(path[0]!) && globMatches(rest, path.slice(1));
}

/** The files that the comma-separated paths or globs name, from `cwd` (node_modules and .git are not searched by `**`). */
export function reportFiles(setting: string, cwd: string): string[] {
  const found = new Set<string>();
  let dirs = 0;
  for (const raw of setting.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const abs = isAbsolute(raw) ? raw : join(cwd, raw);
    const segments = abs.split(sep);
    const firstGlob = segments.findIndex((s) => /[*?]/.test(s));
    if (firstGlob < 0) {
      found.add(abs);
      continue;
    }
    const base = segments.slice(0, firstGlob).join(sep) || sep;
    const pattern = segments.slice(firstGlob);
    const walk = (dir: string): void => {
      if (++dirs > MAX_DIRS || found.size >= MAX_FILES) return;
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const full = join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== 'node_modules' && e.name !== '.git') walk(full);
        } else if (globMatches(pattern, relative(base, full).split(sep))) {
          found.add(full);
        }
      }
    };
    walk(base);
  }
  return [...found].sort().slice(0, MAX_FILES);
}

/**
 * TestStarted / TestFinished / TestOutput events of the reports written since `since` (ms), laid
 * out one after the other from that time (a report gives durations, not start times).
 */
export function testEventsFromReports(files: readonly string[], since: number, options: { task: string; testOutput: boolean; now?: number }): BuildEvent[] {
  const events: BuildEvent[] = [];
  const now = options.now ?? Date.now();
  let id = 0;
  let at = since;
  for (const file of files) {
    let xml: string;
    try {
      // A second of slack: some file systems keep modification times in whole seconds.
      if (statSync(file).mtimeMs < since - 1000) continue;
      xml = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    let cases;
    try {
      cases = parseJUnitXml(xml);
    } catch {
      continue; // not XML: not a report
    }
    for (const c of cases) {
      id++;
      const start = Math.min(at, now);
      const end = Math.min(start + Math.round(c.seconds * 1000), now);
      at = end;
      events.push(event('TestStarted', { id, suite: c.suite, name: c.name, task: options.task }, start));
      if (options.testOutput && c.output !== undefined) events.push(event('TestOutput', { id, stream: 'stdout', text: c.output }, end));
      events.push(
        event(
          'TestFinished',
          { id, outcome: c.outcome, ...(c.failure !== undefined ? { failure: c.failure } : {}), ...(c.skipReason !== undefined ? { skipReason: c.skipReason } : {}) },
          end,
        ),
      );
    }
  }
  return events;
}
