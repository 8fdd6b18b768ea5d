// Calls to the server. The session cookie travels by itself (same origin); a call that changes
// something sends the CSRF token the sign-in returned (double submit).

export interface Session {
  readonly user: string;
  readonly permissions: readonly string[];
  readonly projects: readonly string[] | null;
  readonly expiresAt: number | null;
  readonly csrfToken?: string;
}

// The shapes of the server's answers, from the one module that gathers them (types only: nothing
// of the server is bundled).
import type { BuildDetails, EventsPage, Facets, FailureGroupPage, FailureGroupRow, ListPage, TestHistory, TestsOverview, Trends } from '../../src/services/web-api.js';
import { ApiError } from '../../ui/api-error.js';
export type {
  BuildDetails,
  Estimate,
  EventsPage,
  FacetValue,
  Facets,
  FailureGroupBuildRow,
  FailureGroupPage,
  FailureGroupRow,
  FailureGroupTestRow,
  FlakyEvidence,
  ListRow,
  TaskRow,
  TaskStat,
  TestHistory,
  TestRunRow,
  TestsOverview,
  TestSummary,
  TrendBucket,
  Trends,
  Verdict,
  VerdictKind,
} from '../../src/services/web-api.js';
export { ApiError };

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
    getJson<ListPage>(`/api/search/builds?${q({ query, after, limit })}`, signal),
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
    getJson<EventsPage>(
      `/api/builds/${encodeURIComponent(id)}/events?${q({ offset, limit })}${types.map((t) => `&type=${encodeURIComponent(t)}`).join('')}`,
      signal,
    ),
};
