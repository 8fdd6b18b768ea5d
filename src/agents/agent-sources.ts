// What the Gradle init script and the Maven extension get written into their sources when they
// are made, besides the agent version: the redaction patterns every agent shares
// (agents/redaction-patterns.json) and the agent contract (agents/agent-contract.json), as
// literals of the target language, so that neither agent reads a file at build time or parses JSON.

import { redactionRules } from '../store/ingest/redact.js';
import { agentContract } from './contract.js';

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

/**
 * A JSON value as an expression of the language: Groovy map and list literals, or Java calls of
 * Contract.java's `m(key, value, ...)` (a LinkedHashMap) and `l(...)` (a List). The contract's
 * `about` texts stay out: they are for people reading the file.
 */
export function literal(value: unknown, language: 'java' | 'groovy'): string {
  const str = language === 'java' ? javaString : groovyString;
  if (typeof value === 'string') return str(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return language === 'java' ? `l(${value.map((v) => literal(v, language)).join(', ')})` : `[${value.map((v) => literal(v, language)).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([k]) => k !== 'about');
    if (language === 'java') return `m(${entries.map(([k, v]) => `${str(k)}, ${literal(v, language)}`).join(', ')})`;
    return entries.length === 0 ? '[:]' : `[${entries.map(([k, v]) => `${str(k)}: ${literal(v, language)}`).join(', ')}]`;
  }
  throw new Error(`no ${language} literal for ${JSON.stringify(value)}`);
}

/** The agents' sources with the patterns, the mask and the agent contract written in. */
export function withSharedData(source: string, language: 'java' | 'groovy'): string {
  const mask = redactionRules().mask;
  if (!/^[*A-Za-z0-9_ [\]-]*$/.test(mask)) throw new Error(`the redaction mask must be plain characters, got ${JSON.stringify(mask)}`);
  return source
    .replaceAll('/*@REDACTION_PATTERNS@*/', language === 'java' ? javaRedactionRows() : groovyRedactionRows())
    .replaceAll('@REDACTION_MASK@', mask)
    .replaceAll('/*@AGENT_CONTRACT@*/ null', literal(agentContract(), language));
}
