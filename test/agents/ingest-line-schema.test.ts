// The ingest line's JSON Schema (schema/ingest-line.schema.json) against what it must agree with:
// the tool types of the field catalog, the agents' build ID (agent-contract.json), the event types
// the docs say the agents send (docs/send-your-builds.md) and of the event model, the OpenAPI
// request body of POST /api/builds, and a build an agent makes.

import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { agentContract } from '../../src/agents/contract.js';
import { jsBuild } from '../../src/agents/npm/js-build.js';
import { TOOL_TYPES } from '../../src/query/catalog.js';
import { INGEST_LINE_SCHEMA, parseLine, validateRecord } from '../../src/store/ingest/validate.js';

interface Schema {
  properties: { buildId: { pattern: string }; toolType: { enum: string[] } };
  $defs: { event: { properties: { type: { properties: { eventType: { examples: string[] } } } } } };
}
const schema = INGEST_LINE_SCHEMA as unknown as Schema;
const eventTypes = schema.$defs.event.properties.type.properties.eventType.examples;
const docs = readFileSync('docs/send-your-builds.md', 'utf8');

/** The text of a docs section, from its heading to the next heading of the same level. */
function section(heading: string): string {
  const from = docs.indexOf(`\n${heading}\n`);
  expect(from, heading).toBeGreaterThanOrEqual(0);
  const rest = docs.slice(from + heading.length + 2);
  const end = rest.search(/\n## /);
  return end < 0 ? rest : rest.slice(0, end);
}

describe('the ingest line schema', () => {
  it('names the catalog\'s tool types and the agents\' build IDs', () => {
    expect(schema.properties.toolType.enum).toEqual([...TOOL_TYPES]);
    const { alphabet, length } = agentContract().buildId;
    expect(alphabet).toBe('0123456789abcdefghijklmnopqrstuvwxyz');
    expect(schema.properties.buildId.pattern).toBe(`^[0-9a-z]{${length}}$`);
  });

  it('knows every event type the docs say the agents send, and the event model\'s', () => {
    const sent = section('## Events the agents send (additions to the event model)').split('\n\n').find((p) => p.includes('The agents send the events'))!;
    const listed = [...sent.matchAll(/`([A-Z][A-Za-z]+)`/g)].map((m) => m[1]!);
    expect(listed.length).toBeGreaterThan(10);
    for (const t of listed) expect(eventTypes, t).toContain(t);
    const additions = section('## Event model additions of the Bazel, npm and pytest agents');
    for (const row of additions.split('\n').filter((l) => /^\| `[A-Z]/.test(l))) {
      for (const t of [...row.split('|')[1]!.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!)) expect(eventTypes, t).toContain(t);
    }
    // The event model this project implements, when its spec sits beside the repository.
    const model = '../shared/spec/event-model.md';
    if (existsSync(model)) {
      const rows = readFileSync(model, 'utf8').split('\n').filter((l) => /^\| `[A-Z][A-Za-z]+` \|/.test(l));
      // The schema may know more (the agents' additions), never less.
      for (const t of rows.map((r) => /`([A-Za-z]+)`/.exec(r)![1]!)) expect(eventTypes, t).toContain(t);
    }
  });

  it('is the OpenAPI request body of POST /api/builds', () => {
    const openapi = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as { paths: Record<string, { post: { requestBody: { content: Record<string, Record<string, unknown>> } } }> };
    expect(openapi.paths['/api/builds']!.post.requestBody.content['application/x-ndjson']!['x-itemSchema']).toEqual(INGEST_LINE_SCHEMA);
  });

  it('accepts what an agent sends and says where and what is wrong otherwise', () => {
    const build = jsBuild('abcdefghijklm', { argv: ['npm', 'test'], cwd: process.cwd(), startedAt: 1000, finishedAt: 2000, exitCode: 0, env: {} }, []);
    expect(validateRecord(JSON.parse(JSON.stringify(build)))).toMatchObject({ ok: true, record: { buildId: 'abcdefghijklm', toolType: 'jsbuild' } });
    const line = (o: Record<string, unknown>) => JSON.stringify({ toolType: 'native', toolVersion: '1', agentVersion: '1', events: [], ...o });
    const ev = { timestamp: 1, type: { majorVersion: 1, minorVersion: 0, eventType: 'X' }, data: {} };
    expect(parseLine(line({ toolType: 'make' }))).toEqual({ ok: false, path: '$.toolType', error: 'Expected one of native, jvmbuild, targetbuild, scalabuild, jsbuild or pybuild, got "make"' });
    expect(parseLine(line({ buildId: 'abcdefghijklm', events: [ev, { ...ev, timestamp: 1.5 }] }))).toEqual({ ok: false, path: '$.events[1].timestamp', error: 'Expected epoch milliseconds (an integer), got 1.5', buildId: 'abcdefghijklm' });
    expect(parseLine(line({ buildId: 'ABC' }))).toEqual({ ok: false, path: '$.buildId', error: 'Expected 13 characters of [0-9a-z], got "ABC"' });
    expect(parseLine(line({ events: [{ ...ev, type: { majorVersion: 1, minorVersion: 0 } }] }))).toMatchObject({ path: '$.events[0].type.eventType', error: 'Expected a non-empty string, got undefined' });
    expect(parseLine(line({ events: [{ ...ev, data: [] }] }))).toMatchObject({ path: '$.events[0].data', error: 'Expected an object, got an array' });
    expect(parseLine('[1]')).toMatchObject({ path: '$', error: 'Expected a JSON object (one build per line), got an array' });
    expect(parseLine(line({ buildId: null }))).toMatchObject({ ok: true, record: { buildId: undefined } });
  });
});
