// Runs the CLI from source (development and tests): `npx tsx src/cli/run.ts <command> ...`.
import { runCommand } from './main.js';

await runCommand(process.argv.slice(2));
