// Wildcard patterns as SQL building blocks: LIKE text, prefix ranges, trigram phrases.
// All of them are bound as parameters; nothing here is ever spliced into SQL text.

/** Lower-cased literal segments (the checker lower-cases already; again here so SQL and evaluator agree). */
export function segmentsOf(segments: readonly string[]): string[] {
  return segments.map((s) => s.toLowerCase());
}

/**
 * Whether a pattern's segments (as written: a `*` between each two) are a wildcard without a
 * literal prefix, other than a bare `*`: no index range serves it, so the SQL first collects
 * candidates from a trigram table or a multi-valued field's terms (dialect.ts).
 */
export function wildcardWithoutPrefix(segments: readonly string[]): boolean {
  return segments.length >= 2 && segments[0] === '' && !segments.every((s) => s === '');
}

/** Escapes LIKE's metacharacters (`%`, `_`) and the escape character itself, for `ESCAPE '\'`. */
export function escapeLike(literal: string): string {
  return literal.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The LIKE pattern of wildcard segments: `*` becomes `%`, the literal runs are escaped. */
export function likePattern(segments: readonly string[]): string {
  return segments.map(escapeLike).join('%');
}

/** Number of characters (code points), as the trigram tokenizers count them. */
export function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * The smallest string greater than every string that starts with `prefix`, in code point order
 * (SQLite's BINARY collation compares UTF-8 bytes, which orders like code points). So
 * `prefix <= s < upper` holds exactly for the strings that start with `prefix`. Undefined when no
 * such string exists (the prefix is all U+10FFFF).
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = Array.from(prefix, (c) => c.codePointAt(0)!);
  while (cps.length > 0) {
    const last = cps.pop()!;
    if (last < 0x10ffff) {
      // Skip the surrogate block: those are not characters and never appear in valid text.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return String.fromCodePoint(...cps, next);
    }
  }
  return undefined;
}

/** The longest literal segment: the best trigram candidate. */
export function longestSegment(segments: readonly string[]): string {
  return segments.reduce((a, b) => (charCount(b) > charCount(a) ? b : a), '');
}

/** An FTS5 query for the literal substring `text` in `column` (a quoted phrase; `"` doubled). */
export function ftsPhrase(text: string, column?: string): string {
  const phrase = `"${text.replace(/"/g, '""')}"`;
  return column === undefined ? phrase : `{${column}} : ${phrase}`;
}
