// Build IDs: random, assigned when a line has none, by the one definition every agent follows too:
// the `buildId` of the agent contract (agents/agent-contract.json: 13 characters of 0-9 and a-z,
// about 67 bits). The store's and the export API's checks use the pattern made from it here; the
// ingest line schema (schema/ingest-line.schema.json) states the same pattern, and a test holds
// the schema, the contract's readers and these to one another (test/store/build-id.test.ts).

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildIdSpec {
  /** The characters of a build ID, each equally likely in a new one. */
  readonly alphabet: string;
  readonly length: number;
}

/** The agent contract: three levels below the package root from src/store/ingest/ and dist/store/ingest/ alike. */
const CONTRACT_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'agents', 'agent-contract.json');

export const BUILD_ID: BuildIdSpec = (JSON.parse(readFileSync(CONTRACT_FILE, 'utf8')) as { buildId: BuildIdSpec }).buildId;

/** The alphabet as runs of consecutive characters: `0-9`, `a-z` (a single character stays alone). */
function runs(alphabet: string): string[][] {
  const out: string[][] = [];
  for (const c of [...alphabet].sort()) {
    const run = out.at(-1);
    if (run !== undefined && c.codePointAt(0)! === run.at(-1)!.codePointAt(0)! + 1) run.push(c);
    else out.push([c]);
  }
  return out;
}

const RUNS = runs(BUILD_ID.alphabet);
const classChar = (c: string): string => (/[\]\\^-]/.test(c) ? `\\${c}` : c);

/** The alphabet as the body of a regular expression's character class: `0-9a-z`. */
export const BUILD_ID_CLASS = RUNS.map((r) => (r.length > 2 ? `${classChar(r[0]!)}-${classChar(r.at(-1)!)}` : r.map(classChar).join(''))).join('');

/** A whole build ID: `^[0-9a-z]{13}$`, as the ingest line schema's `buildId.pattern` says. */
export const BUILD_ID_PATTERN = new RegExp(`^[${BUILD_ID_CLASS}]{${BUILD_ID.length}}$`);

/** What a build ID is, in words for messages: `13 characters of 0-9 and a-z`. */
export const BUILD_ID_WORDS = `${BUILD_ID.length} characters of ${RUNS.map((r) => (r.length > 2 ? `${r[0]}-${r.at(-1)}` : r.join(', '))).join(' and ')}`;

/** Bytes at or above the largest multiple of the alphabet's size are skipped: no character is favoured. */
const LIMIT = 256 - (256 % BUILD_ID.alphabet.length);
let pool = Buffer.alloc(0);
let pos = 0;

export function newBuildId(): string {
  const { alphabet, length } = BUILD_ID;
  let id = '';
  while (id.length < length) {
    if (pos >= pool.length) {
      pool = randomBytes(4096);
      pos = 0;
    }
    const b = pool[pos++]!;
    if (b < LIMIT) id += alphabet[b % alphabet.length];
  }
  return id;
}
