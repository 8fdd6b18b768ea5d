// Calls to the server. The session cookie travels by itself (same origin); a call that changes
// something sends the CSRF token the sign-in returned (double submit).

export interface Session {
  readonly user: string;
  readonly permissions: readonly string[];
  readonly projects: readonly string[] | null;
  readonly expiresAt: number | null;
  readonly csrfToken?: string;
}

export interface ListRow {
  readonly id: string;
  readonly outcome: string | null;
  readonly tool: string;
  readonly toolVersion: string;
  readonly project: string | null;
  readonly requested: readonly string[];
  readonly user: string | null;
  readonly host: string | null;
  readonly start: number | null;
  readonly duration: number | null;
  readonly tags: readonly string[];
}

export interface FacetValue {
  readonly value: string;
  readonly count: number;
}

export type Facets = Readonly<Record<'buildOutcome' | 'buildTool' | 'project' | 'user' | 'tag', readonly FacetValue[]>>;

export interface TaskRow {
  readonly path: string;
  readonly outcome: 'executed' | 'up-to-date' | 'from-cache' | 'skipped' | 'failed';
  readonly start: number;
  readonly duration: number;
  readonly cacheable: boolean | null;
}

export interface BuildDetails extends ListRow {
  readonly agentVersion: string;
  readonly availableAt: number;
  readonly excluded: readonly string[];
  readonly failures: readonly { classification: string; message: string }[];
  readonly tasks: readonly TaskRow[];
  readonly environment: Readonly<Record<string, unknown>>;
  readonly options: Readonly<Record<string, unknown>>;
  readonly cache: Readonly<Record<string, unknown>> | null;
  readonly serverSettings: Readonly<Record<string, unknown>>;
  readonly configurationCache: string | null;
  readonly values: readonly { name: string; value: string }[];
  readonly eventTypes: Readonly<Record<string, number>>;
}

export interface TaskStat {
  readonly path: string;
  readonly runs: number;
  readonly failures: number;
  readonly meanDuration: number;
  readonly maxDuration: number;
}

export interface TrendBucket {
  readonly start: number;
  readonly end: number;
  readonly label: string;
  readonly builds: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly unknown: number;
  readonly failureRate: number | null;
  readonly duration: { p25: number; p50: number; p75: number; p95: number } | null;
  readonly tasks: Readonly<Record<string, number>>;
  readonly avoidedShare: number | null;
}

export interface Trends {
  readonly from: number;
  readonly to: number;
  readonly buckets: readonly TrendBucket[];
  readonly slowestTasks: readonly TaskStat[];
  readonly failingTasks: readonly TaskStat[];
}

export interface RawEvent {
  readonly timestamp: number;
  readonly type: { readonly eventType: string };
  readonly data: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
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
  details: (id: string, signal?: AbortSignal) => getJson<BuildDetails>(`/api/builds/${encodeURIComponent(id)}/details`, signal),
  events: (id: string, types: readonly string[], offset: number, limit: number, signal?: AbortSignal) =>
    getJson<{ events: RawEvent[]; offset: number; total: number }>(
      `/api/builds/${encodeURIComponent(id)}/events?${q({ offset, limit })}${types.map((t) => `&type=${encodeURIComponent(t)}`).join('')}`,
      signal,
    ),
};
