// The shared tables every agent's test runs through that agent's own rules (one data file each,
// so that the TypeScript, Python, Groovy and Java implementations cannot drift apart).

import { readFileSync } from 'node:fs';

export interface GitRemoteCases {
  readonly cases: readonly { readonly name: string; readonly remote: string; readonly sent: string }[];
  /** Strings none of the sent remotes may hold. */
  readonly secrets: readonly string[];
}

export interface RedactionCases {
  /** The values listed by the user (BUILDSCOPE_REDACT_VALUES) for these cases. */
  readonly listed: readonly string[];
  readonly cases: readonly { readonly text: string; readonly redacted: string }[];
  readonly adversarial: readonly { readonly piece: string; readonly times: number }[];
}

export const gitRemoteCases = JSON.parse(readFileSync('test/agents/fixtures/git-remote-cases.json', 'utf8')) as GitRemoteCases;
export const redactionCases = JSON.parse(readFileSync('test/agents/fixtures/redaction-cases.json', 'utf8')) as RedactionCases;

/** Every input of both tables, as one line each (`remote` or `text`, tab, base64 of the input): what the JVM harnesses read. */
export function harnessInput(): { kind: 'remote' | 'text'; input: string; expected?: string }[] {
  return [
    ...gitRemoteCases.cases.map((c) => ({ kind: 'remote' as const, input: c.remote, expected: c.sent })),
    ...redactionCases.cases.map((c) => ({ kind: 'text' as const, input: c.text, expected: c.redacted })),
    ...redactionCases.adversarial.map((a) => ({ kind: 'text' as const, input: a.piece.repeat(a.times) })),
  ];
}

/** The lines a JVM harness reads: `remote|text <TAB> base64 of the input`. */
export function harnessLines(): string {
  return harnessInput()
    .map((c) => `${c.kind}\t${Buffer.from(c.input, 'utf8').toString('base64')}\n`)
    .join('');
}

/**
 * Checks what a harness answered (`base64 of the result <TAB> milliseconds` per input line): the
 * expected result of every table case, and a bounded time for the long adversarial strings.
 */
export function checkHarnessOutput(output: string, expect: (actual: unknown, message?: string) => { toBe(v: unknown): void; toBeLessThan(v: number): void }): void {
  const cases = harnessInput();
  const lines = output.trim().split('\n');
  expect(lines.length, output.slice(0, 2000)).toBe(cases.length);
  cases.forEach((c, i) => {
    const [encoded, ms] = lines[i]!.split('\t');
    const actual = Buffer.from(encoded!, 'base64').toString('utf8');
    if (c.expected !== undefined) expect(actual, `${c.kind} ${JSON.stringify(c.input)}`).toBe(c.expected);
    // A catastrophic (exponential) pattern does not end on these; the bounded ones take from
    // milliseconds (V8) to seconds (java.util.regex on a loaded machine: 8 s seen for 240,000
    // characters). The bound only tells the two apart; speed is not measured here.
    else expect(Number(ms), `${c.input.length} characters of ${JSON.stringify(c.input.slice(0, 30))}`).toBeLessThan(60_000);
  });
}
