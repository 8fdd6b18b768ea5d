#!/usr/bin/env node
// The `buildscope` command. Runs the compiled CLI from dist/ (built by `npm install`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (!existsSync(compiled)) {
  process.stderr.write('buildscope: dist/ is missing; run `npm run build` (or `npm install`) first.\n');
  process.exit(1);
}
// The import is awaited while nothing else is pending: a timer holds the process meanwhile (see
// runCommand in src/cli/main.ts, which holds it until the command has started).
const loading = setInterval(() => undefined, 60_000);
const { runCommand } = await import(compiled).finally(() => clearInterval(loading));
await runCommand(process.argv.slice(2));
