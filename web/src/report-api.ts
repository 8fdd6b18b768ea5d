// Calls for the build page's tests and console log (GET /api/builds/{id}/tests and /console),
// a page at a time.

import type { BuildTestRow as TestRow, BuildTestsPage as TestsPage, ConsolePage, TestFilter } from '../../src/services/web-api.js';
import { getJson } from './api.js';

export type { ConsolePage, TestFilter, TestRow, TestsPage };

const q = (params: Record<string, string | number | undefined>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  return p.toString();
};

export const reportApi = {
  tests: (id: string, options: { name: string; filter: TestFilter; offset: number; limit: number }, signal?: AbortSignal) =>
    getJson<TestsPage>(`/api/builds/${encodeURIComponent(id)}/tests?${q(options)}`, signal),
  console: (id: string, options: { offset: number; limit: number; search?: string }, signal?: AbortSignal) =>
    getJson<ConsolePage>(`/api/builds/${encodeURIComponent(id)}/console?${q(options)}`, signal),
};
