// Runs the CLI from source (development and tests): `npx tsx src/cli/run.ts <command> ...`.
import { main } from './main.js';

// Under tsx, modules load through loader hooks that run on a thread of their own, and that thread
// does not keep the process alive: a dynamic import awaited while nothing else was pending (the
// commands load their modules lazily) could end the process with status 13, "unsettled top-level
// await" (seen for `serve --workers 2` on a loaded machine). A timer holds the process until the
// command's start is done; what it starts (a server, child processes) holds it from then on.
const keepAlive = setInterval(() => undefined, 60_000);
try {
  await main(process.argv.slice(2));
} finally {
  clearInterval(keepAlive);
}
