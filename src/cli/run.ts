// Runs the CLI from source (development and tests): `npx tsx src/cli/run.ts <command> ...`.
import { main } from './main.js';

await main(process.argv.slice(2));
