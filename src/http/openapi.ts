// The OpenAPI document of the whole HTTP surface, generated from the route schemas of the REST API
// and of every face. The server serves it at /api/openapi.json; docs/openapi.json is the committed
// copy (a test fails when it is stale). Regenerate with:
//
//   node --import tsx src/http/openapi.ts --write

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { openBuildStore } from '../store/build-store.js';
import { createLogger } from '../log.js';
import { buildApp, type FacePlugin } from './app.js';

export const OPENAPI_FILE = fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));

/** Builds the application over a throwaway database and returns its OpenAPI document. */
export async function generateOpenApi(plugins?: readonly FacePlugin[]): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'buildscope-openapi-'));
  const logger = createLogger('openapi', 'error');
  const config = parseConfig({ database: { data: dir } });
  const database = await openDatabase(config.database);
  try {
    const store = await openBuildStore(database);
    const faces = plugins ?? (await (await import('../server.js')).facePlugins());
    const app = await buildApp({ config, database, store, logger }, { plugins: faces });
    const doc = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    await store.close();
    return JSON.parse(JSON.stringify(doc)) as Record<string, unknown>;
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatOpenApi(doc: unknown): string {
  return JSON.stringify(doc, null, 2) + '\n';
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1] && process.argv.includes('--write')) {
  const doc = await generateOpenApi();
  writeFileSync(OPENAPI_FILE, formatOpenApi(doc));
  process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
}
