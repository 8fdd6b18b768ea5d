// Searches compared between servers (REST /api/builds with attributes).
import { expect } from 'vitest';

export const SEARCHES = [
  '',
  'buildTool:native',
  'buildOutcome:failed',
  'tag:*',
  'buildDuration>1m',
  'project:billing OR user:dmitri',
  'not buildTool:jsbuild and requested:test',
  'value:branch=main',
  'buildStartTime>-400d',
];

/** GET /api/builds with attributes for a query, without the local availableAt (the mirror's own clock). */
export async function search(base: string, authorization: string, query: string): Promise<unknown[]> {
  const url = `${base}/api/builds?since=0&maxBuilds=1000&models=attributes&query=${encodeURIComponent(query)}`;
  const res = await fetch(url, { headers: { authorization } });
  expect(res.status, `${query}: ${res.status}`).toBe(200);
  const builds = (await res.json()) as Record<string, unknown>[];
  return builds.map(({ availableAt: _a, ...rest }) => rest);
}

