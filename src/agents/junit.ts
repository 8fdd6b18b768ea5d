// JUnit XML reports, the format Surefire, Bazel's test runners, jest/vitest/mocha reporters and
// pytest's --junitxml write: each <testcase> as one test with its outcome, duration and, for a
// failure, the failure's type, message and text (the stack trace). Read with fast-xml-parser;
// what is kept is bounded, so that a huge report cannot make a huge build.

import { XMLParser } from 'fast-xml-parser';

export type JUnitOutcome = 'passed' | 'failed' | 'skipped';

export interface JUnitCase {
  /** The class (`classname`), else the enclosing suite's name. */
  readonly suite: string;
  readonly name: string;
  readonly outcome: JUnitOutcome;
  /** Seconds, as the report says (0 when it does not). */
  readonly seconds: number;
  readonly failure?: { readonly type?: string; readonly message: string; readonly stackTrace?: string };
  readonly skipReason?: string;
  /** The case's captured output (<system-out>, then <system-err>), when the report has it. */
  readonly output?: string;
}

/** Bounds of what one report yields. */
export const JUNIT_LIMITS = { cases: 10_000, message: 4 * 1024, stackTrace: 16 * 1024, output: 16 * 1024 } as const;

type Node = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: '#text',
  // Elements that may repeat are always arrays, so one test and many read alike.
  isArray: (name) => ['testsuite', 'testcase', 'failure', 'error', 'skipped', 'system-out', 'system-err'].includes(name),
  processEntities: true,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
});

const cut = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max)}… (${s.length - max} more characters)` : s);
const text = (v: unknown): string => (typeof v === 'string' ? v : v !== null && typeof v === 'object' ? String((v as Node)['#text'] ?? '') : '');
const attr = (n: Node, key: string): string | undefined => (typeof n[key] === 'string' && n[key] !== '' ? (n[key] as string) : undefined);
/** The texts of a repeated element: a string when it holds only text, an object with `#text` otherwise. */
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.map(text) : []);
/** The first of a repeated element as a node, also when it holds only text (`<failure>text</failure>`, `<skipped/>`). */
const first = (v: unknown): Node | undefined => {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const x: unknown = v[0];
  return typeof x === 'string' ? { '#text': x } : x !== null && typeof x === 'object' ? (x as Node) : {};
};
const list = (v: unknown): Node[] => (Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Node[]) : []);

/** The test cases of a report, in document order; throws on text that is not XML. */
export function parseJUnitXml(xml: string): JUnitCase[] {
  const root = parser.parse(xml) as Node;
  const out: JUnitCase[] = [];
  const visitSuite = (suite: Node): void => {
    for (const inner of list(suite['testsuite'])) visitSuite(inner);
    for (const c of list(suite['testcase'])) {
      if (out.length >= JUNIT_LIMITS.cases) return;
      out.push(caseOf(c, attr(suite, 'name') ?? ''));
    }
  };
  const top = (root['testsuites'] as Node | undefined) ?? root;
  for (const suite of list(top['testsuite'])) visitSuite(suite);
  return out;
}

function caseOf(c: Node, suiteName: string): JUnitCase {
  const problem = first(c['failure']) ?? first(c['error']);
  const skipped = first(c['skipped']);
  const output = [...texts(c['system-out']), ...texts(c['system-err'])].join('').trim();
  const seconds = Number(attr(c, 'time') ?? 0);
  const base = {
    suite: attr(c, 'classname') ?? suiteName,
    name: attr(c, 'name') ?? '(unnamed)',
    seconds: Number.isFinite(seconds) && seconds >= 0 ? seconds : 0,
    ...(output !== '' ? { output: cut(output, JUNIT_LIMITS.output) } : {}),
  };
  if (problem !== undefined) {
    const body = text(problem).trim();
    const message = attr(problem, 'message') ?? body.split('\n')[0] ?? '';
    const type = attr(problem, 'type');
    return {
      ...base,
      outcome: 'failed',
      failure: { ...(type !== undefined ? { type } : {}), message: cut(message, JUNIT_LIMITS.message), ...(body !== '' ? { stackTrace: cut(body, JUNIT_LIMITS.stackTrace) } : {}) },
    };
  }
  if (skipped !== undefined) {
    const reason = attr(skipped, 'message') ?? text(skipped).trim();
    return { ...base, outcome: 'skipped', ...(reason !== '' ? { skipReason: cut(reason, JUNIT_LIMITS.message) } : {}) };
  }
  return { ...base, outcome: 'passed' };
}
