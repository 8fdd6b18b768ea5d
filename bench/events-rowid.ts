// Store migration 0018 (event chunks by rowid) on a copy of an existing SQLite store: the time of
// the conversion, and build_events' pages (dbstat) before and after, leaf and interior.
//
//   node --import tsx bench/events-rowid.ts --data DIR
//
// DIR is a store's data directory on the layout before 0018 (for example one kept from
// bench/ingest.ts at the base commit); it is converted in place, so pass a copy.

import { openDatabase } from '../src/db/database.js';
import { migrateStoreAndSearch } from '../src/store/schema/migrations.js';

const args = process.argv.slice(2);
const i = args.indexOf('--data');
if (i < 0 || args[i + 1] === undefined) {
  console.error('usage: bench/events-rowid.ts --data DIR (a copy of a store before migration 0018)');
  process.exit(2);
}
const handle = await openDatabase({ data: args[i + 1]! });
const db = handle.sqlite;
if (db === undefined) throw new Error('bench/events-rowid.ts measures SQLite stores only');
type Pages = { pagetype: string; pages: number; bytes: number };
const pages = (): Pages[] =>
  db.prepare("SELECT pagetype, count(*) AS pages, sum(pgsize) AS bytes FROM dbstat WHERE name = 'build_events' GROUP BY pagetype ORDER BY pagetype").all() as Pages[];
const builds = Number(db.prepare('SELECT count(*) FROM builds').pluck().get());
const depth = (): number => Number(db.prepare("SELECT max(length(path) - length(replace(path, '/', ''))) FROM dbstat WHERE name = 'build_events'").pluck().get());
const before = pages();
const depthBefore = depth();
const started = performance.now();
const cpu0 = process.cpuUsage();
await migrateStoreAndSearch(handle);
const cpu = process.cpuUsage(cpu0);
const seconds = (performance.now() - started) / 1000;
const after = pages();
const depthAfter = depth();
console.log(`\n${builds} builds: migration 0018 in ${seconds.toFixed(1)} s (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s)\n`);
console.log('| layout | page type | pages | bytes/build |');
console.log('|---|---|---|---|');
for (const [name, rows] of [['before', before], ['after', after]] as const) {
  for (const r of rows) console.log(`| ${name} | ${r.pagetype} | ${r.pages} | ${(r.bytes / builds).toFixed(1)} |`);
}
console.log(`\nB-tree levels below the root: before ${depthBefore}, after ${depthAfter}`);
await handle.close();
