// Failure groups: two failures whose messages differ only in the parts that change from run to run
// (numbers, file paths, hashes, timestamps, object addresses, UUIDs) are one failure. The group key
// is the failure's type and its message with those parts replaced by placeholders, so that "Login
// did not complete within 5000 ms" and "... within 5012 ms" are one group, and the ingest stores the
// key once (failure_groups, store migration 0020) for every failed test run and build failure.

/** Longest message text a key is made from: enough to tell failures apart, bounded per row. */
const MAX_KEY_CHARS = 300;

// Order matters: the wider patterns first, so that a timestamp is not cut into numbers and a
// path's digits do not become <n> inside <path>.
const RULES: readonly (readonly [RegExp, string])[] = [
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b0x[0-9a-f]+\b/gi, '<addr>'],
  // Java's default toString: acme.Order@1b6d3586
  [/@[0-9a-f]{4,16}\b/gi, '@<addr>'],
  // Windows paths, then Unix paths of two segments or more (a/b, /tmp/x.txt, ./src/y.ts:12).
  [/\b[a-z]:\\[^\s:'"]+/gi, '<path>'],
  [/(?:\.{0,2}\/)?(?:[\w.@-]+\/)+[\w.@-]+/g, '<path>'],
  // Hashes: hex runs of 7 characters or more with at least one digit and one letter.
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, '<hash>'],
  [/-?\b\d+(\.\d+)?(e[+-]?\d+)?\b/gi, '<n>'],
];

/** The message of a failure with its changing parts replaced (whitespace collapsed, bounded). */
export function normalizeMessage(message: string): string {
  let s = message.length > MAX_KEY_CHARS * 4 ? message.slice(0, MAX_KEY_CHARS * 4) : message;
  for (const [re, to] of RULES) s = s.replace(re, to);
  s = s.replace(/\s+/g, ' ').trim();
  return s.length > MAX_KEY_CHARS ? s.slice(0, MAX_KEY_CHARS) : s;
}

/**
 * The key of a failure's group: `type: normalized message` (type left out when unknown). A
 * failure that says nothing (no type, no message) has no group.
 */
export function failureGroupKey(type: unknown, message: unknown): string | undefined {
  const t = typeof type === 'string' ? type.trim() : '';
  const m = typeof message === 'string' ? normalizeMessage(message) : '';
  if (t === '' && m === '') return undefined;
  return t === '' ? m : m === '' ? t : `${t}: ${m}`;
}
