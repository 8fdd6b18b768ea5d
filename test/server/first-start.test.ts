// A first start with a mistake in a face section of the configuration must leave nothing behind:
// no database, no administrator whose generated password was never shown. Fixed, the next start
// is a first start again and prints the administrator's credentials.

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startServer } from '../../src/server.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const logger = createLogger('test', 'silent');

describe('first start with a bad face section', () => {
  for (const [section, bad] of [
    ['export', { heartbeatMs: 'often' }],
    ['provenance', { keys: { algorithm: 'rot13' } }],
    ['cacheNodes', { nodes: 'many' }],
    ['playground', { enabled: 'maybe' }],
  ] as const) {
    it(`${section}: refuses before touching the database, and the next good start creates the administrator`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'bs-first-start-'));
      dirs.push(dir);
      const data = join(dir, 'data');
      const lines: string[] = [];
      const config = (extra: Record<string, unknown>) => parseConfig({ server: { port: 0 }, database: { data }, ...extra });
      await expect(startServer({ config: config({ [section]: bad }), logger, print: (l) => lines.push(l) })).rejects.toThrow(new RegExp(section));
      expect(existsSync(data) ? readdirSync(data) : []).toEqual([]);
      expect(lines).toEqual([]);

      const server = await startServer({ config: config({}), logger, print: (l) => lines.push(l) });
      try {
        expect(server.created?.user).toBe('admin');
        expect(lines.join('\n')).toContain(server.created!.password);
      } finally {
        await server.close();
      }
    });
  }
});
