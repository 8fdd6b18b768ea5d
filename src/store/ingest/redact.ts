// Secrets out of build data: the patterns of agents/redaction-patterns.json (credentials in URLs,
// password=/token= pairs, `-u user:pass`, the shapes of well-known keys and tokens, Buildscope's
// own access keys and tokens) and literal values a user lists. The capture agents apply them to
// every string of a build before it leaves the machine (the Gradle, Maven and pytest agents with
// the same file, in their own languages); the ingest applies them again to the free text it stores
// from any source (redactIngestEvents), so that a build sent by an older or third-party agent, or
// converted from Bazel's events, is no different. docs/send-your-builds.md, "Secrets".

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildEvent } from '../types.js';

export interface RedactionPattern {
  readonly name: string;
  readonly regex: string;
  readonly ignoreCase?: boolean;
}

export interface RedactionRules {
  readonly mask: string;
  readonly patterns: readonly RedactionPattern[];
}

/** The file every agent shares: the package's agents/ folder, three levels above src/store/ingest/ and dist/store/ingest/ alike. */
export const REDACTION_PATTERNS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'agents', 'redaction-patterns.json');

let rules: RedactionRules | undefined;
let compiled: { mask: string; regexes: RegExp[]; any: RegExp[] } | undefined;

export function redactionRules(): RedactionRules {
  rules ??= JSON.parse(readFileSync(REDACTION_PATTERNS_FILE, 'utf8')) as RedactionRules;
  return rules;
}

function compiledRules(): { mask: string; regexes: RegExp[]; any: RegExp[] } {
  if (compiled === undefined) {
    const r = redactionRules();
    // `any`: all patterns in two alternations (with and without case), one scan of a text that
    // holds nothing to redact (most texts) instead of one per pattern.
    const either = (ignoreCase: boolean) => r.patterns.filter((p) => (p.ignoreCase ?? false) === ignoreCase).map((p) => `(?:${p.regex})`);
    compiled = {
      mask: r.mask,
      regexes: r.patterns.map((p) => new RegExp(p.regex, p.ignoreCase ? 'gi' : 'g')),
      any: [new RegExp(either(false).join('|')), new RegExp(either(true).join('|'), 'i')],
    };
  }
  return compiled;
}

/**
 * The text with every match of the patterns replaced by the part the pattern keeps (its group 1)
 * and the mask, then every listed literal value by the mask. Time linear in the text's length.
 */
export function redactText(text: string, literals: readonly string[] = []): string {
  if (literals.length > 0 || text.length > CLEAN_TEXT_LENGTH) return redactWith(text, literals);
  if (clean.has(text)) return text;
  const out = redactWith(text, []);
  if (out === text) {
    if (clean.size >= CLEAN_TEXTS) clean.clear();
    clean.add(text);
  }
  return out;
}

/**
 * Short texts seen lately that the rules leave as they are. The texts of builds repeat: a
 * project's test suites and names, its tasks and outcomes come again in every build, and a build
 * of 200 tests holds about 1,600 such strings; a look-up costs less than the rules' two scans.
 * Only texts without a secret are kept (one with a match is redacted each time, and never held
 * here). Emptied whole when full, which bounds its memory (10,000 texts of at most 200 characters)
 * without the bookkeeping of an eviction order.
 */
const clean = new Set<string>();
const CLEAN_TEXTS = 10_000;
const CLEAN_TEXT_LENGTH = 200;

function redactWith(text: string, literals: readonly string[]): string {
  const { mask, regexes, any } = compiledRules();
  let out = text;
  if (any.some((re) => re.test(text))) for (const re of regexes) {
    re.lastIndex = 0;
    if (!re.test(out)) continue;
    re.lastIndex = 0;
    out = out.replace(re, (_match: string, kept: unknown) => (typeof kept === 'string' ? kept : '') + mask);
  }
  for (const value of literals) if (value !== '' && out.includes(value)) out = out.split(value).join(mask);
  return out;
}

/**
 * Every string inside a value (object members' values, array items), redacted; the same object
 * when nothing changed. A copy is made from the first change on only: the ingest passes every test
 * event through here (400 a build of 200 tests), and copying each unchanged object took as long as
 * the rules' tests of its strings.
 */
export function redactStrings<T>(value: T, literals: readonly string[] = []): T {
  if (typeof value === 'string') return redactText(value, literals) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const r = redactStrings(value[i] as unknown, literals);
      if (r !== value[i]) (out ??= value.slice())[i] = r;
    }
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === 'object') {
    const members = value as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(members)) {
      const r = redactStrings(members[k], literals);
      if (r !== members[k]) (out ??= { ...members })[k] = r;
    }
    return (out ?? value) as T;
  }
  return value;
}

/**
 * The events whose text a user or a tool writes freely: failure messages and their causes
 * (BuildFinished), custom values (where Bazel's --build_metadata and git remotes land), requested
 * commands, any event of console or test output, and the tests themselves (a parametrized test's
 * name and parameters, a failure's message and stack trace: TestStarted, TestFinished). Task
 * events, the bulk of a build, are names the build tool makes and are left alone: they cost the
 * ingest nothing.
 */
const FREE_TEXT_EVENT = /^(BuildFinished|UserNamedValue|UserTag|BuildRequestedTasks)$|Output|Console|Log|Failure|Test(Result|Output|Started|Finished)/;

/**
 * What the ingest stores: the events with the free text of FREE_TEXT_EVENT events redacted (a new
 * array only when something changed, so the common build costs one test per such string).
 */
export function redactIngestEvents(events: readonly BuildEvent[]): readonly BuildEvent[] {
  let out: BuildEvent[] | undefined;
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (!FREE_TEXT_EVENT.test(e.type.eventType)) continue;
    const data = redactStrings(e.data);
    if (data !== e.data) {
      out ??= events.slice();
      out[i] = { ...e, data };
    }
  }
  return out ?? events;
}
