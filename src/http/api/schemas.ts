// JSON schemas shared by the API routes (they also make the OpenAPI document).

import { STATUS_CODES } from 'node:http';

export const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 7807 problem document',
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
  },
  required: ['type', 'title', 'status', 'detail'],
  additionalProperties: true,
} as const;

/** Problem responses for the given statuses, for a route's `response` schema. */
export function PROBLEM_RESPONSES(statuses: readonly number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const s of statuses) {
    out[s] = { description: STATUS_CODES[s] ?? 'Error', content: { 'application/problem+json': { schema: PROBLEM_SCHEMA } } };
  }
  return out;
}
