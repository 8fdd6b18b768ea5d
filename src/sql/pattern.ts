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

/**
 * An FTS5 query for the literal substring `text` in `column` (a quoted phrase; `"` doubled), for a
 * trigram table with positions (`detail=full`: the value terms' table).
 */
export function ftsPhrase(text: string, column?: string): string {
  const phrase = `"${text.replace(/"/g, '""')}"`;
  return column === undefined ? phrase : `{${column}} : ${phrase}`;
}

/** The most trigrams one infix literal asks a trigram table for (see ftsTrigrams). */
export const MAX_TRIGRAMS = 32;

// Lone surrogates reach SQLite as U+FFFD (the driver writes UTF-8), in the stored text and in a
// bound query alike; counting them so here keeps the trigram windows where SQLite sees them.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * An FTS5 query for the rows whose text holds every trigram of `text`, for a trigram table without
 * positions (`detail=none`, which has neither phrases of several trigrams nor column filters): the
 * AND of its distinct trigrams, each a quoted string (`"` doubled). A superset of the rows holding
 * `text` (a trigram may come from another column, the trigrams need not be adjacent); the LIKE
 * next to it decides. Undefined when no trigram can be expressed, and the caller asks for no
 * candidates: `text` shorter than 3 characters, or holding a NUL (FTS5 reads its query only up to
 * a NUL, and SQLite's LIKE its pattern likewise, so no trigram set is a safe superset then; the
 * query parser rejects NUL, so only a checked query built by code can hold one).
 * A long literal asks for MAX_TRIGRAMS of its trigrams, spread evenly from the first to the last:
 * each costs FTS5 a doclist merge (~25 µs), and leaving trigrams out only widens the superset
 * the LIKE filters.
 */
export function ftsTrigrams(text: string): string | undefined {
  if (text.includes('\0')) return undefined;
  const chars = Array.from(text.replace(LONE_SURROGATE, '\ufffd'));
  const distinct = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) distinct.add(chars.slice(i, i + 3).join(''));
  if (distinct.size === 0) return undefined;
  const all = [...distinct];
  const picked = all.length <= MAX_TRIGRAMS ? all : Array.from({ length: MAX_TRIGRAMS }, (_, i) => all[Math.round((i * (all.length - 1)) / (MAX_TRIGRAMS - 1))]!);
  return picked.map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
}

