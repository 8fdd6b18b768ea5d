// A row of the builds list and a page of rows (GET /api/search/builds), written once: as the JSON
// Schema the route answers with (and the OpenAPI document shows), the types read from it. The
// service makes rows of this type (src/services/web.ts), the route checks its answer with the
// schema (src/http/api/search.ts), and the web app reads the type (src/services/web-api.ts); the
// types come from the schema literals by json-schema-to-ts.

import type { FromSchema } from 'json-schema-to-ts';

const NULLABLE_NUMBER = { type: ['number', 'null'] } as const;

export const LIST_ROW_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    outcome: { type: ['string', 'null'] },
    tool: { type: 'string' },
    toolVersion: { type: 'string' },
    project: { type: ['string', 'null'] },
    requested: { type: 'array', items: { type: 'string' } },
    user: { type: ['string', 'null'] },
    host: { type: ['string', 'null'] },
    // Epoch ms, or null when unknown.
    start: NULLABLE_NUMBER,
    // Milliseconds, or null when unknown.
    duration: NULLABLE_NUMBER,
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['id', 'outcome', 'tool', 'toolVersion', 'project', 'requested', 'user', 'host', 'start', 'duration', 'tags'],
} as const;

export const LIST_PAGE_SCHEMA = {
  type: 'object',
  properties: {
    builds: { type: 'array', items: LIST_ROW_SCHEMA },
    // The ID to pass as `after` for the next (older) page, or null on the last page.
    next: { type: ['string', 'null'] },
  },
  required: ['builds', 'next'],
} as const;

/** A row of the builds list. */
export type ListRow = FromSchema<typeof LIST_ROW_SCHEMA>;

/** A page of the builds list, newest first. */
export type ListPage = FromSchema<typeof LIST_PAGE_SCHEMA>;
