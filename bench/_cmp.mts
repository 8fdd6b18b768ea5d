import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo-data.js';
import { buildEventMessage } from '../src/export/messages.js';
import { SEE_EVERYTHING } from '../src/store/types.js';
const lines = [...demoBuilds({ builds: 3000, seed: 7, now: Date.UTC(2026, 0, 15) })].join('\n');
const stores = [];
for (const pack of [false, true]) {
  const h = await openDatabase({ data: mkdtempSync(join(tmpdir(), 'cmp-')) });
  const s = await openBuildStore(h, { ingestWorker: false, packEvents: pack });
  await s.ingestNdjson(lines);
  stores.push(s);
}
for (let r = 0; r < 3; r++) for (const [i, s] of stores.entries()) {
  const t = performance.now(); const c = process.cpuUsage();
  for await (const b of s.streamBuilds({ visibility: SEE_EVERYTHING })) { let q = 0; for await (const e of s.streamEvents(b.id)) buildEventMessage(++q, e); }
  const cpu = process.cpuUsage(c);
  console.log(i ? 'packed' : 'text  ', 'wall µs/build', Math.round((performance.now() - t) * 1000 / 3000), 'cpu µs/build', Math.round((cpu.user + cpu.system) / 3000));
}
