// Fixture folders (one per syntax case): `query.txt` is the input, `explain.txt` what explainText
// prints for it (the checked AST, or the diagnostics with code frames). To accept a change of the
// output, or to write the expected output of a new case, run with UPDATE_FIXTURES=1 and review the
// diff. Without it a case whose expected output is missing fails: it would otherwise compare the
// output with itself.

import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { explainText } from '../../src/query/index.js';

const dir = new URL('./fixtures/', import.meta.url);
const NOW = Date.UTC(2024, 5, 15, 12, 0, 0);
const update = process.env['UPDATE_FIXTURES'] === '1';

describe('fixtures', () => {
  for (const name of readdirSync(dir).sort()) {
    it(name, () => {
      const query = readFileSync(new URL(`${name}/query.txt`, dir), 'utf8');
      const out = new URL(`${name}/explain.txt`, dir);
      const { ok, output } = explainText(query, { now: NOW });
      expect(ok).toBe(!name.startsWith('error-'));
      if (update) writeFileSync(out, `${output}\n`);
      expect(existsSync(out), `${name}/explain.txt is missing: run with UPDATE_FIXTURES=1 and review it`).toBe(true);
      expect(`${output}\n`).toBe(readFileSync(out, 'utf8'));
    });
  }
});
