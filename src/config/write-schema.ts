// Writes schema/server-config.schema.json from the sections' schemas (a test keeps the two equal):
//   node --import tsx src/config/write-schema.ts

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serverConfigSchema } from '../config.js';

const file = fileURLToPath(new URL('../../schema/server-config.schema.json', import.meta.url));
writeFileSync(file, `${JSON.stringify(serverConfigSchema, null, 2)}\n`);
process.stdout.write(`wrote ${file}\n`);
