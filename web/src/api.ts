// Calls to the server. The session cookie travels by itself (same origin); a call that changes
// something sends the CSRF token the sign-in returned (double submit).

export interface Session {
  readonly user: string;
  readonly permissions: readonly string[];
  readonly projects: readonly string[] | null;
  readonly expiresAt: number | null;
  readonly csrfToken?: string;
}

// The shapes of the server's answers, from the modules that make them (types only: nothing of the
// server is bundled).
import type { BuildDetails, ListRow } from '../../src/services/web.js';
import type { Facets, Trends } from '../../src/store/analytics/analytics.js';
import type { FailureGroupPage, TestHistory, TestsOverview, TestSummary } from '../../src/services/tests.js';
import type { FailureGroupBuildRow, FailureGroupRow, FailureGroupTestRow, TestRunRow } from '../../src/store/types.js';
import { ApiError } from '../../playground/src/api.js';
export type { FailureGroupBuildRow, FailureGroupPage, FailureGroupRow, FailureGroupTestRow, TestHistory, TestRunRow, TestsOverview, TestSummary };
export type { Estimate, FlakyEvidence, Verdict, VerdictKind } from '../../src/services/test-verdicts.js';
export type { BuildDetails, ListRow };
export type { FacetValue, Facets, TaskStat, TrendBucket, Trends } from '../../src/store/analytics/analytics.js';
export type { TaskRow } from '../../src/store/events/tasks.js';
export { ApiError };

export interface RawEvent {
  readonly timestamp: number;
  readonly type: { readonly eventType: string };
  readonly data: unknown;
}


let csrf: string | null = null;

async function failure(res: Response): Promise<ApiError> {
  let detail = res.statusText || `HTTP ${res.status}`;
  try {
    const body = (await res.json()) as { detail?: unknown };
    if (typeof body.detail === 'string' && body.detail) detail = body.detail;
  } catch {
    // Not JSON: keep the status text.
  }
  return new ApiError(res.status, detail);
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(path, { headers: { accept: 'application/json' }, credentials: 'same-origin', ...(signal ? { signal } : {}) });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

/** The signed-in user, or null when nobody is. */
export async function currentSession(): Promise<Session | null> {
  const res = await fetch('/api/session', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
  // 204: nobody is signed in; 401: the session has ended (the server removed its cookie).
  if (res.status === 204 || res.status === 401) return null;
  if (!res.ok) throw await failure(res);
  const s = (await res.json()) as Session;
  csrf = s.csrfToken ?? null;
  return s;
}

export async function signIn(body: { user: string; password: string } | { accessKey: string }): Promise<Session> {
  const res = await fetch('/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res);
  const s = (await res.json()) as Session;
  csrf = s.csrfToken ?? null;
  return s;
}

export async function signOut(): Promise<void> {
  const res = await fetch('/api/session', { method: 'DELETE', headers: csrf ? { 'x-csrf-token': csrf } : {}, credentials: 'same-origin' });
  if (!res.ok && res.status !== 401) throw await failure(res);
  csrf = null;
}

const q = (params: Record<string, string | number | undefined | null>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) p.set(k, String(v));
  return p.toString();
};

export const api = {
  list: (query: string, after: string | null, limit: number, signal?: AbortSignal) =>
    getJson<{ builds: ListRow[]; next: string | null }>(`/api/search/builds?${q({ query, after, limit })}`, signal),
  count: (query: string, signal?: AbortSignal) => getJson<{ count: number }>(`/api/search/count?${q({ query })}`, signal),
  facets: (query: string, signal?: AbortSignal) => getJson<Facets>(`/api/search/facets?${q({ query })}`, signal),
  trends: (query: string, from: number, to: number, interval: 'day' | 'week', tz: string, signal?: AbortSignal) =>
    getJson<Trends>(`/api/trends?${q({ query, from, to, interval, tz })}`, signal),
  tests: (query: string, limit: number, signal?: AbortSignal) => getJson<TestsOverview>(`/api/tests?${q({ query, limit })}`, signal),
  testHistory: (id: number, signal?: AbortSignal) => getJson<TestHistory>(`/api/tests/${id}/history`, signal),
  failureGroups: (query: string, limit: number, signal?: AbortSignal) => getJson<{ groups: FailureGroupRow[] }>(`/api/failure-groups?${q({ query, limit })}`, signal),
  failureGroup: (id: number, query: string, before: string | null, signal?: AbortSignal) => getJson<FailureGroupPage>(`/api/failure-groups/${id}?${q({ query, before })}`, signal),
  details: (id: string, signal?: AbortSignal) => getJson<BuildDetails>(`/api/builds/${encodeURIComponent(id)}/details`, signal),
  events: (id: string, types: readonly string[], offset: number, limit: number, signal?: AbortSignal) =>
    getJson<{ events: RawEvent[]; offset: number; total: number }>(
      `/api/builds/${encodeURIComponent(id)}/events?${q({ offset, limit })}${types.map((t) => `&type=${encodeURIComponent(t)}`).join('')}`,
      signal,
    ),
};
