// The web pages' pure logic (no DOM, tested in Node): the address as the page's state, query
// terms added by clicks, the timeline's lanes, display formats.

import { parseQuery, quoteValue, TOOL_NAMES, TOOL_TYPES, type ToolType } from '../../src/query/index.js';

/** Which page an address shows. */
export type Route =
  | { readonly page: 'builds'; readonly query: string; readonly after: string | null }
  | { readonly page: 'build'; readonly id: string }
  | { readonly page: 'compare'; readonly a: string; readonly b: string }
  | { readonly page: 'trends'; readonly query: string; readonly interval: 'day' | 'week'; readonly days: number }
  | { readonly page: 'tests'; readonly query: string }
  | { readonly page: 'test'; readonly id: number }
  | { readonly page: 'failure-group'; readonly id: number; readonly query: string }
  | { readonly page: 'signin'; readonly next: string }
  | { readonly page: 'unknown' };

export function routeOf(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/builds' || path === '/') return { page: 'builds', query: params.get('query') ?? '', after: params.get('after') };
  const m = /^\/builds\/([^/]+)$/.exec(path);
  if (m) return { page: 'build', id: decodeURIComponent(m[1]!) };
  const c = /^\/compare\/([^/]+)\/([^/]+)$/.exec(path);
  if (c) return { page: 'compare', a: decodeURIComponent(c[1]!), b: decodeURIComponent(c[2]!) };
  if (path === '/trends') {
    const days = Number(params.get('days') ?? '30');
    return { page: 'trends', query: params.get('query') ?? '', interval: params.get('interval') === 'week' ? 'week' : 'day', days: Number.isInteger(days) && days > 0 && days <= 730 ? days : 30 };
  }
  if (path === '/tests') return { page: 'tests', query: params.get('query') ?? '' };
  const t = /^\/tests\/([1-9][0-9]{0,15})$/.exec(path);
  if (t && Number.isSafeInteger(Number(t[1]))) return { page: 'test', id: Number(t[1]) };
  const g = /^\/failure-groups\/([1-9][0-9]{0,15})$/.exec(path);
  if (g && Number.isSafeInteger(Number(g[1]))) return { page: 'failure-group', id: Number(g[1]), query: params.get('query') ?? '' };
  if (path === '/signin') return { page: 'signin', next: safeNext(params.get('next')) };
  return { page: 'unknown' };
}

/** Only addresses of this server (a path), so a link cannot send people elsewhere after sign-in. */
export function safeNext(next: string | null): string {
  return next !== null && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/builds';
}

export function buildsUrl(query: string, after: string | null = null): string {
  const p = new URLSearchParams();
  if (query !== '') p.set('query', query);
  if (after !== null) p.set('after', after);
  const s = p.toString();
  return s ? `/builds?${s}` : '/builds';
}

export function trendsUrl(query: string, interval: 'day' | 'week' = 'day', days = 30): string {
  const p = new URLSearchParams();
  if (query !== '') p.set('query', query);
  if (interval !== 'day') p.set('interval', interval);
  if (days !== 30) p.set('days', String(days));
  const s = p.toString();
  return s ? `/trends?${s}` : '/trends';
}

export function testsUrl(query: string): string {
  return query === '' ? '/tests' : `/tests?${new URLSearchParams({ query }).toString()}`;
}

export function testUrl(id: number): string {
  return `/tests/${id}`;
}

/** A failure group's page, over the builds of `query` (all the viewer may see when empty). */
export function failureGroupUrl(id: number, query = ''): string {
  return query === '' ? `/failure-groups/${id}` : `/failure-groups/${id}?${new URLSearchParams({ query }).toString()}`;
}

export function buildUrl(id: string): string {
  return `/builds/${encodeURIComponent(id)}`;
}

/** A literal value as the language writes it: `\\` and `*` escaped, quoted when needed. */
function literal(value: string): string {
  const pattern = value.replace(/[\\*]/g, (c) => `\\${c}`);
  // `null` alone means "unknown"; quoted, it is the word.
  return /^null$/i.test(pattern) ? `"${pattern}"` : quoteValue(pattern);
}

/** `field:value` matching exactly this value (the language's wildcards and escapes neutralised). */
export function term(field: string, value: string): string {
  return `${field}:${literal(value)}`;
}

/** `value:name=value` matching exactly this custom value. */
export function customValueTerm(name: string, value: string): string {
  const text = `${name.replace(/[\\*=]/g, (c) => `\\${c}`)}=${value.replace(/[\\*]/g, (c) => `\\${c}`)}`;
  return `value:${quoteValue(text)}`;
}

/**
 * The query with `extra` added as a conjunct: appended when the query is a plain conjunction,
 * else the query is bracketed first, so `a or b` + `c` is `(a or b) c`, never `a or b c`.
 */
export function addTerm(query: string, extra: string): string {
  const q = query.trim();
  if (q === '') return extra;
  if (q.split(/\s+/).includes(extra)) return q;
  const parsed = parseQuery(q, { now: 0 });
  const needsBrackets = parsed.ok && parsed.expr?.kind === 'or';
  return needsBrackets ? `(${q}) ${extra}` : `${q} ${extra}`;
}

/** The query narrowed to builds that started in [start, end). */
export function periodQuery(query: string, start: number, end: number): string {
  const iso = (t: number) => new Date(t).toISOString();
  return addTerm(addTerm(query, `buildStartTime>=${iso(start)}`), `buildStartTime<${iso(end)}`);
}

export interface Span {
  readonly start: number;
  readonly duration: number;
}

/**
 * Puts each task on a lane so that no two tasks of a lane overlap (the first lane that is free
 * when the task starts): tasks that ran one after another share a lane, parallel ones do not. A
 * task holds [start, start + duration), one of no duration its instant.
 * Returns the lane of each task and the number of lanes. O(n log n + n * lanes).
 */
export function packLanes(tasks: readonly Span[]): { lanes: number[]; count: number } {
  const order = tasks.map((_, i) => i).sort((a, b) => tasks[a]!.start - tasks[b]!.start || a - b);
  // Where each lane's last task ends; `instant` when it took no time, so that it still holds its
  // instant (it is drawn with a minimum width): a task starting then goes to another lane.
  const ends: { end: number; instant: boolean }[] = [];
  const lanes = new Array<number>(tasks.length);
  for (const i of order) {
    const t = tasks[i]!;
    let lane = ends.findIndex(({ end, instant }) => end < t.start || (end === t.start && !instant));
    if (lane < 0) lane = ends.push({ end: 0, instant: false }) - 1;
    ends[lane] = { end: t.start + t.duration, instant: t.duration === 0 };
    lanes[i] = lane;
  }
  return { lanes, count: ends.length };
}

/** The index of the task under point (x ms, lane), or -1; `byLane` holds each lane's tasks sorted by start. */
export function taskAt(byLane: readonly (readonly number[])[], tasks: readonly Span[], lane: number, at: number, slack = 0): number {
  const list = byLane[lane];
  if (list === undefined) return -1;
  let lo = 0;
  let hi = list.length - 1;
  let found = -1;
  // The last task that starts at or before `at + slack`.
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (tasks[list[mid]!]!.start <= at + slack) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found < 0) return -1;
  const t = tasks[list[found]!]!;
  return at <= t.start + t.duration + slack ? list[found]! : -1;
}

/** `2024-03-01 08:15` in the viewer's time zone, or '' for unknown. */
export function formatStart(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '';
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export { formatDuration } from '../../ui/format.js';

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

export function percent(x: number | null): string {
  return x === null ? '–' : `${(x * 100).toFixed(1)}%`;
}

/** The build tool of a kind, as people name it (`native` is Gradle); an unknown kind as it is. */
export function toolName(kind: string): string {
  return (TOOL_TYPES as readonly string[]).includes(kind) ? TOOL_NAMES[kind as ToolType] : kind;
}

/** The tool and the kind a search names it by: "Gradle (native)". */
export function toolLabel(kind: string): string {
  const name = toolName(kind);
  return name === kind ? kind : `${name} (${kind})`;
}
