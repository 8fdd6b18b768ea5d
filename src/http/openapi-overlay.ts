// What the OpenAPI document says of operations beyond their route schemas: operation IDs, the
// answers each operation gives (4xx included, with their content types: SSE streams as
// text/event-stream, NDJSON, problem+json), request bodies the handlers read themselves (the
// provenance service's three encodings) and the operations' real security. Applied to the
// generated document only (documentation; no effect on validation or serialisation), so the
// routes of every face stay as they are. An operation with no entry gets an operationId derived
// from its method and path, so every operation has one.

import { STATUS_CODES } from 'node:http';
import { PROBLEM_SCHEMA } from './api/schemas.js';

type Json = Record<string, unknown>;
type Operation = Json & { operationId?: string; responses?: Record<string, Json>; security?: unknown[]; requestBody?: Json; description?: string };

interface OverlayEntry {
  readonly operationId: string;
  /** Responses to add (an existing response of the same status is kept). */
  readonly responses?: Record<string, Json>;
  readonly requestBody?: Json;
  /** Replaces the operation's security (`[]`: no credentials). */
  readonly security?: unknown[];
  readonly description?: string;
}

const problem = (status: number, description: string = STATUS_CODES[status] ?? 'Error'): Json => ({
  description,
  content: { 'application/problem+json': { schema: PROBLEM_SCHEMA } },
});
const problems = (statuses: Record<number, string>): Record<string, Json> =>
  Object.fromEntries(Object.entries(statuses).map(([s, d]) => [s, problem(Number(s), d)]));

// ---- export API (seed 001) ----
const SSE = (description: string): Json => ({
  description,
  content: {
    'text/event-stream': {
      schema: { type: 'string', description: 'Server-sent events: `event: Build` / `event: BuildEvent` messages with `id` and JSON `data`; heartbeats are comments' },
    },
  },
});
const EXPORT_COMMON = {
  '204': { description: 'Nothing (more) to send: a finished stream; the client must not reconnect' },
  ...problems({ 401: 'Missing or wrong credentials', 403: 'The credential lacks the permission exportData' }),
};
const exportListing = (operationId: string, by: 'date' | 'build'): OverlayEntry => {
  const refusals: Record<number, string> = {
    400: by === 'date' ? 'Invalid :date (not 0, epoch ms or now; or in the future), query or Last-Event-ID' : 'Invalid build ID, query or Last-Event-ID',
    503: 'The named build is still being stored; Retry-After says when to retry',
  };
  if (by === 'build') refusals[404] = 'The build does not exist or is not visible';
  return { operationId, responses: { '200': SSE('A stream of Build messages'), ...EXPORT_COMMON, ...problems(refusals) } };
};
const exportEvents = (operationId: string, version: 1 | 2): OverlayEntry => ({
  operationId,
  responses: {
    '200': SSE('One Build message, then the events of the build as BuildEvent messages'),
    ...EXPORT_COMMON,
    ...problems({
      400: version === 1 ? 'Invalid build ID, eventTypes or Last-Event-ID, or the build is not a native build (v1)' : 'Invalid build ID, eventTypes or Last-Event-ID',
      404: 'The build does not exist or is not visible',
      503: 'The build is still being stored; Retry-After says when to retry',
    }),
  },
});

// ---- provenance (seed 000) ----
const NDJSON = 'application/x-ndjson';
const criteria = (extra: Json = {}): Json => ({
  type: 'object',
  required: ['sha256', 'repositoryUrl'],
  properties: {
    sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 of the package' },
    repositoryUrl: { type: 'string', description: 'The repository holding the package (URL or host/path)' },
    ...extra,
  },
});
const PUBLISH_FIELDS = criteria({
  buildScan: {
    type: 'object',
    description: 'The builds to attest: by ID and by advanced search query',
    properties: { ids: { type: 'array', items: { type: 'string' } }, queries: { type: 'array', items: { type: 'string' } } },
  },
});
const FLAT_PUBLISH_FIELDS = criteria({
  'buildScan.ids': { type: 'array', items: { type: 'string' }, description: 'Repeatable' },
  'buildScan.queries': { type: 'array', items: { type: 'string' }, description: 'Repeatable' },
});
const bodyOf = (json: Json, flat: Json, description: string): Json => ({
  required: true,
  description,
  content: {
    'application/json': { schema: json },
    'application/x-www-form-urlencoded': { schema: flat },
    'multipart/form-data': { schema: flat },
  },
});
const results = (description: string): Json => ({
  description,
  content: {
    'application/json': { schema: { type: 'array', items: { type: 'object', additionalProperties: true } } },
    [NDJSON]: { schema: { type: 'string', description: 'One JSON object per line, sent as available (with Accept: application/x-ndjson)' } },
  },
});
const PROVENANCE_AUTH = { 401: 'Credentials missing or not allowed for the endpoint', 403: 'Access to the requested resource is disallowed' };
const publish = (operationId: string): OverlayEntry => ({
  operationId,
  requestBody: bodyOf(PUBLISH_FIELDS, FLAT_PUBLISH_FIELDS, 'sha256, repositoryUrl and the builds to attest, in any of the three encodings'),
  responses: {
    '200': results('One result per attestation written'),
    ...problems({ 400: 'Invalid request content', ...PROVENANCE_AUTH, 413: 'The body is too large', 415: 'Not one of the three request encodings', 500: 'An error while publishing (an external service failed)' }),
  },
});
const evaluate = (operationId: string): OverlayEntry => ({
  operationId,
  requestBody: bodyOf(criteria(), criteria(), 'sha256 and repositoryUrl of the package, in any of the three encodings'),
  responses: {
    '200': results('One PolicyScan.Result per policy of the scan'),
    ...problems({
      400: 'Invalid request content. Bad criteria (sha256 or repositoryUrl).',
      ...PROVENANCE_AUTH,
      404: 'The policy scan is not defined',
      413: 'The body is too large',
      415: 'Not one of the three request encodings',
      429: 'The evaluation pool is exhausted; retry with exponential backoff',
      500: 'An external service failed',
    }),
  },
});
const fetchAttestation = (operationId: string): OverlayEntry => ({
  operationId,
  responses: {
    '200': {
      description: 'The attestation envelope (DSSE)',
      content: { 'application/json': { schema: { type: 'object', additionalProperties: true } }, [NDJSON]: { schema: { type: 'string' } } },
    },
    ...problems({ 400: 'Malformed digest or invalid instance identifier', ...PROVENANCE_AUTH, 404: 'No attestation found matching request.', 500: 'An external service failed' }),
  },
});

const NS = '/packages/{type}/{namespace}/{name}/{version}';
const NO_NS = '/packages/{type}/{name}/{version}';

/** Entries by `<method> <OpenAPI path>`. */
export const OVERLAY: Readonly<Record<string, OverlayEntry>> = {
  'post /api/auth/token': { operationId: 'CreateAccessToken' },
  'get /api/builds': { operationId: 'GetBuilds' },
  'get /api/builds/{id}': { operationId: 'GetBuild' },
  'post /api/builds': { operationId: 'PublishBuilds' },
  'get /api/version': { operationId: 'GetVersion' },
  'get /s/{id}': { operationId: 'GetBuildLink' },
  'get /build-export/v1/builds/since/{date}': exportListing('ExportBuildsSinceV1', 'date'),
  'get /build-export/v1/builds/sinceBuild/{buildId}': exportListing('ExportBuildsSinceBuildV1', 'build'),
  'get /build-export/v1/build/{buildId}/events': exportEvents('ExportBuildEventsV1', 1),
  'get /build-export/v2/builds/since/{date}': exportListing('ExportBuildsSince', 'date'),
  'get /build-export/v2/builds/sinceBuild/{buildId}': exportListing('ExportBuildsSinceBuild', 'build'),
  'get /build-export/v2/build/{buildId}/events': exportEvents('ExportBuildEvents', 2),
  [`post ${NS}/attestations`]: publish('PublishAttestations'),
  [`post ${NO_NS}/attestations`]: publish('PublishAttestationsWithoutNamespace'),
  [`post ${NS}/policy-scans/{scan}`]: evaluate('EvaluatePolicyScan'),
  [`post ${NO_NS}/policy-scans/{scan}`]: evaluate('EvaluatePolicyScanWithoutNamespace'),
  [`get ${NS}/{digest}/attestations/{instance}/{id}`]: fetchAttestation('GetAttestation'),
  [`get ${NO_NS}/{digest}/attestations/{instance}/{id}`]: fetchAttestation('GetAttestationWithoutNamespace'),
  'get /provenance/keys': {
    operationId: 'GetProvenanceKeys',
    security: [],
    description: 'Public: verifiers fetch the keys without credentials.',
    responses: { '200': { description: 'The public keys (PEM) with their keyids', content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } } },
  },
  'put /api/build-cache/node-status': {
    operationId: 'ReportCacheNodeStatus',
    // The node authenticates with its key and secret in the body, not with an Authorization header.
    security: [],
    description: 'A cache node authenticates with its node key and secret in the body (created with `buildscope cache-node credentials NAME`); no Authorization header.',
    responses: problems({ 400: 'The body is not a valid report', 401: 'Unknown node key or wrong node secret', 413: 'The body is too large', 415: 'Not application/json' }),
  },
  'get /api/build-cache/nodes': { operationId: 'ListCacheNodes', responses: problems({ 401: 'Missing or wrong credentials', 403: 'The credential lacks manageCacheNodes' }) },
  'get /api/build-cache/nodes/{name}': {
    operationId: 'GetCacheNode',
    responses: problems({ 400: 'Not a node name', 401: 'Missing or wrong credentials', 403: 'The credential lacks manageCacheNodes', 404: 'No cache node of that name' }),
  },
  'get /metrics': { operationId: 'GetMetrics', responses: problems({ 401: 'Missing or wrong credentials', 403: 'The credential lacks readMetrics' }) },
  'get /health/ready': { operationId: 'GetReadiness', responses: problems({ 503: 'The database does not answer' }) },
  'get /api/query/explain': { operationId: 'ExplainQuery', responses: problems({ 400: 'The query parameter is given twice or is too long' }) },
};

/** `get /a/{b}/c` -> `getABC`: the operationId of an operation without an overlay entry. */
export function derivedOperationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Applies the overlay to a generated document (in place) and returns it. */
export function applyOverlay<T extends { paths?: Record<string, Record<string, unknown>> }>(doc: T): T {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, value] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const op = value as Operation;
      const entry = OVERLAY[`${method} ${path}`];
      op.operationId ??= entry?.operationId ?? derivedOperationId(method, path);
      if (entry === undefined) continue;
      const responses = { ...(op.responses ?? {}) };
      for (const [status, response] of Object.entries(entry.responses ?? {})) {
        // The route's own 200 of fastify ("Default Response", no content) is replaced.
        const own = responses[status];
        if (own === undefined || (own['content'] === undefined && own['description'] === 'Default Response')) responses[status] = response;
      }
      op.responses = responses;
      if (entry.requestBody !== undefined && op.requestBody === undefined) op.requestBody = entry.requestBody;
      if (entry.security !== undefined) op.security = entry.security;
      if (entry.description !== undefined) op.description = op.description ? `${op.description} ${entry.description}` : entry.description;
    }
  }
  return doc;
}
