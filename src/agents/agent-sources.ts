// What the Gradle init script and the Maven extension get written into their sources when they
// are made, besides the agent version: the redaction patterns every agent shares
// (agents/redaction-patterns.json), as literals of the target language, so that neither agent
// reads a file at build time or parses JSON.

import { redactionRules } from '../store/redact.js';

/** A Java string literal: JSON's escapes are Java's for the characters JSON.stringify writes. */
const javaString = (s: string): string => JSON.stringify(s);

/** A Groovy single-quoted string (no `$` interpolation). */
const groovyString = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** `{regex, "i" or ""}` rows for `String[][] RULES = {...}` (Redaction.java). */
export function javaRedactionRows(): string {
  return redactionRules()
    .patterns.map((p) => `{${javaString(p.regex)}, ${javaString(p.ignoreCase ? 'i' : '')}}`)
    .join(', ');
}

/** `[regex, 'i' or '']` rows for `List<List<String>> REDACTION_RULES = [...]` (buildscope.gradle). */
export function groovyRedactionRows(): string {
  return redactionRules()
    .patterns.map((p) => `[${groovyString(p.regex)}, ${groovyString(p.ignoreCase ? 'i' : '')}]`)
    .join(', ');
}

/** The agents' sources with the patterns and the mask written in. */
export function withRedactionRules(source: string, language: 'java' | 'groovy'): string {
  const mask = redactionRules().mask;
  if (!/^[*A-Za-z0-9_ [\]-]*$/.test(mask)) throw new Error(`the redaction mask must be plain characters, got ${JSON.stringify(mask)}`);
  return source.replaceAll('/*@REDACTION_PATTERNS@*/', language === 'java' ? javaRedactionRows() : groovyRedactionRows()).replaceAll('@REDACTION_MASK@', mask);
}
