#!/usr/bin/env node
// The `buildscope` command. Runs the compiled CLI from dist/ (built by `npm install`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(compiled)) {
  process.stderr.write('buildscope: dist/ is missing; run `npm run build` (or `npm install`) first.\n');
  process.exit(1);
}
const { main } = await import(compiled);
await main(process.argv.slice(2));
