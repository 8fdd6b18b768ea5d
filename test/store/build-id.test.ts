// One definition of the build ID (the agent contract's `buildId`), and every place that states or
// checks it agrees with it: the store's IDs and checks, the agents' reader of the contract, the
// ingest line schema (and so the OpenAPI document), the export API's check and the agents' spool.

import { describe, expect, it } from 'vitest';
import { agentContract, buildIdSource, newBuildId as agentBuildId } from '../../src/agents/contract.js';
import { SPOOL_FILE } from '../../src/agents/spool.js';
import { BUILD_ID_PATTERN as EXPORT_PATTERN, parseBuildId } from '../../src/export/params.js';
import { BUILD_ID, BUILD_ID_CLASS, BUILD_ID_PATTERN, BUILD_ID_WORDS, newBuildId } from '../../src/store/ingest/build-id.js';
import { BUILD_ID_PATTERN as VALIDATE_PATTERN, INGEST_LINE_SCHEMA, validateRecord } from '../../src/store/ingest/validate.js';

const schema = INGEST_LINE_SCHEMA as unknown as { properties: { buildId: { pattern: string; description: string } } };

describe('the build ID', () => {
  it('is the agent contract\'s, as its reader of the agents sees it', () => {
    expect(BUILD_ID).toEqual(agentContract().buildId);
    expect(BUILD_ID).toEqual({ alphabet: '0123456789abcdefghijklmnopqrstuvwxyz', length: 13 });
  });

  it('makes the pattern the ingest line schema states, and the store and the export API check', () => {
    expect(BUILD_ID_CLASS).toBe('0-9a-z');
    expect(BUILD_ID_PATTERN.source).toBe(schema.properties.buildId.pattern);
    expect(schema.properties.buildId.description).toBe(`${BUILD_ID.length} characters of [${BUILD_ID_CLASS}]`);
    expect(VALIDATE_PATTERN).toBe(BUILD_ID_PATTERN);
    expect(EXPORT_PATTERN).toBe(BUILD_ID_PATTERN);
    expect(BUILD_ID_WORDS).toBe('13 characters of 0-9 and a-z');
    expect(parseBuildId('0123456789AbC')).toMatchObject({ kind: 'refusal', status: 400, detail: `Invalid build ID "0123456789AbC": expected ${BUILD_ID_WORDS}` });
  });

  // The store's pattern, the agents' (their spool files, the npm sender's arguments) and the spool
  // file names all take exactly the alphabet's characters at the contract's length.
  const AGENT_PATTERN = new RegExp(`^${buildIdSource()}$`);
  const SPOOL_NAME = { test: (id: string) => SPOOL_FILE.test(`${id}.ndjson`) };
  it.each([
    ['the store', BUILD_ID_PATTERN],
    ['the agents', AGENT_PATTERN],
    ['the spool file names', SPOOL_NAME],
  ] as const)('%s accept exactly the alphabet\'s characters at the contract\'s length', (_, pattern) => {
    const { alphabet, length } = BUILD_ID;
    for (const c of alphabet) expect(pattern.test(c.repeat(length)), c).toBe(true);
    for (const c of ['A', 'Z', '-', '_', '.', ' ', 'é', '/', ':', '`', '{', ']', '\\', '^']) expect(pattern.test(`${c}${alphabet[0]!.repeat(length - 1)}`), c).toBe(false);
    expect(pattern.test(alphabet[0]!.repeat(length - 1))).toBe(false);
    expect(pattern.test(alphabet[0]!.repeat(length + 1))).toBe(false);
  });

  it('is what the server and the agents make: the schema accepts them, and they use the whole alphabet', () => {
    const line = (buildId: string) => ({ buildId, toolType: 'native', toolVersion: '1', agentVersion: '1', events: [] });
    for (const make of [newBuildId, agentBuildId]) {
      const seen = new Set<string>();
      // 300 IDs are 3900 characters: every one of 36 characters is missing with a chance under 1e-40.
      for (let i = 0; i < 300; i++) {
        const id = make();
        expect(id).toMatch(BUILD_ID_PATTERN);
        expect(validateRecord(line(id)).ok, id).toBe(true);
        for (const c of id) seen.add(c);
      }
      expect([...seen].sort().join('')).toBe(BUILD_ID.alphabet);
    }
    expect(validateRecord(line('0123456789AbC')).ok).toBe(false);
  });
});
