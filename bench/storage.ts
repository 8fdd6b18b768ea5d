// Storage benchmark: bytes per build with its events, and export throughput of build events, for
// event chunks and attributes stored as JSON text (as before store migration 0008) and compressed (today), in the
// same run on the same demo builds; plus the compression candidates compared chunk by chunk.
//
//   node --import tsx bench/storage.ts [--quick] [--builds N]   (default 100,000 builds; --quick 5,000)
//
// Goals (issue 18): bytes per build at most 0.4x the text form's; export throughput at least 0.9x,
// judged in builds per CPU-second (wall time moves with the load of a shared machine).
// "Export" here is what an events export does per build: read its chunks and format every event as
// a BuildEvent SSE message from its stored text (streamEventTexts, as /build/:id/events does), over
// every stored build; the former path (streamEvents: decode, then format) is measured as a peer.
// SQLite, in a temporary directory; the file is measured after a WAL checkpoint.

import { mkdtempSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { openDatabase } from '../src/db/database.js';
import { openBuildStore } from '../src/store/build-store.js';
import { demoBuilds } from '../src/store/demo/demo-data.js';
import { encodeEvents, packEvents, unpackEvents } from '../src/store/events/event-codec.js';
import { EVENT_DICTIONARY_1 } from '../src/store/events/compact-dictionary.js';
import { buildEventMessage, buildEventTextMessage } from '../src/export/messages.js';
import { SEE_EVERYTHING, type BuildStore } from '../src/store/types.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const at = args.indexOf('--builds');
const BUILDS = at >= 0 ? Number(args[at + 1]) : quick ? 5000 : 100_000;
const NOW = Date.UTC(2026, 0, 15);

// 1. The candidates, chunk by chunk (one chunk = one demo build's events).
const chunks = [...demoBuilds({ builds: 2000, seed: 1, now: NOW })].map((l) => Buffer.from(encodeEvents((JSON.parse(l) as { events: never[] }).events)));
const rawBytes = chunks.reduce((a, c) => a + c.length, 0);
const DICTIONARY = Buffer.from(EVENT_DICTIONARY_1);
const brotli = (q: number) => (b: Buffer) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: q } });
const candidates: [string, (b: Buffer) => Uint8Array, (b: Uint8Array) => unknown][] = [
  ['deflate-raw 1', (b) => zlib.deflateRawSync(b, { level: 1 }), (b) => zlib.inflateRawSync(b)],
  ['deflate-raw 6', (b) => zlib.deflateRawSync(b, { level: 6 }), (b) => zlib.inflateRawSync(b)],
  // packEvents itself (with its format byte); inflated as unpackEvents does, without the text.
  ['deflate-raw 6 + dictionary (chosen)', (b) => packEvents(b.toString('utf8')), (b) => zlib.inflateRawSync(b.subarray(1), { dictionary: DICTIONARY })],
  // What the store reads with: one reused inflater for small chunks (event-codec.ts), text included.
  ['deflate-raw 6 + dictionary, unpackEvents (reused inflater, to text)', (b) => packEvents(b.toString('utf8')), (b) => unpackEvents(b)],
  ['deflate-raw 9 + dictionary', (b) => zlib.deflateRawSync(b, { level: 9, dictionary: DICTIONARY }), (b) => zlib.inflateRawSync(b, { dictionary: DICTIONARY })],
  ['deflate-raw 9', (b) => zlib.deflateRawSync(b, { level: 9 }), (b) => zlib.inflateRawSync(b)],
  ['gzip 6', (b) => zlib.gzipSync(b, { level: 6 }), (b) => zlib.gunzipSync(b)],
  ['brotli 1', brotli(1), (b) => zlib.brotliDecompressSync(b)],
  ['brotli 4', brotli(4), (b) => zlib.brotliDecompressSync(b)],
  ['brotli 6', brotli(6), (b) => zlib.brotliDecompressSync(b)],
  ['brotli 9', brotli(9), (b) => zlib.brotliDecompressSync(b)],
];
const codecRows = candidates.map(([name, pack, unpack]) => {
  let t = process.cpuUsage();
  const packed = chunks.map(pack);
  const packCpu = process.cpuUsage(t);
  t = process.cpuUsage();
  for (let r = 0; r < 3; r++) for (const p of packed) unpack(p);
  const unpackCpu = process.cpuUsage(t);
  const size = packed.reduce((a, p) => a + p.length, 0);
  return {
    codec: name,
    'bytes/chunk': Math.round(size / chunks.length),
    ratio: +(size / rawBytes).toFixed(3),
    'pack CPU µs/chunk': +((packCpu.user + packCpu.system) / chunks.length).toFixed(1),
    'unpack CPU µs/chunk': +((unpackCpu.user + unpackCpu.system) / 3 / chunks.length).toFixed(1),
  };
});
console.log(`zstd in node:zlib: ${typeof (zlib as Record<string, unknown>)['zstdCompressSync'] === 'function' ? 'yes' : 'no'} (Node ${process.version})`);
console.log(`Compression candidates over ${chunks.length} demo chunks (${Math.round(rawBytes / chunks.length)} bytes of JSON each):`);
console.table(codecRows);

// 2. The store, both forms.
interface Variant {
  readonly name: 'text' | 'compressed';
  store: BuildStore;
  dir: string;
  ingestSeconds: number;
  fileBytes: number;
  eventsTableBytes: number | undefined;
  /** Bytes per build of the largest tables and indexes (dbstat). */
  tables: Record<string, number>;
  exportRuns: number[];
  /** CPU seconds of each export run (process.cpuUsage): steadier than wall time on a shared machine. */
  exportCpu: number[];
  /** The same with the export's former path (every event decoded, then formatted). */
  decodedRuns: number[];
  decodedCpu: number[];
  events: number;
}

async function load(name: Variant['name']): Promise<Variant> {
  const dir = mkdtempSync(join(tmpdir(), `bench-storage-${name}-`));
  const handle = await openDatabase({ data: dir });
  const store = await openBuildStore(handle, { packEvents: name === 'compressed', ingestWorker: false });
  // Today's text storage has no index of the rows left to convert (store migration 0008 added them
  // for the conversion; in a compressed store they stay empty): without them, the baseline is exact.
  if (name === 'text') for (const index of ['build_events_text', 'build_attributes_text']) handle.sqlite!.exec(`DROP INDEX ${index}`);
  const started = performance.now();
  await store.ingestNdjson(
    (async function* () {
      for (const l of demoBuilds({ builds: BUILDS, seed: 7, now: NOW })) yield l + '\n';
    })(),
    { keepResults: false, bulk: true },
  );
  const ingestSeconds = (performance.now() - started) / 1000;
  handle.sqlite!.pragma('wal_checkpoint(TRUNCATE)');
  const fileBytes = statSync(join(dir, 'buildscope.db')).size;
  let eventsTableBytes: number | undefined;
  try {
    // The autoindex of the key exists only in the layout before store migration 0014 (keyed by build ID).
    eventsTableBytes = Number(handle.sqlite!.prepare("SELECT sum(pgsize) FROM dbstat WHERE name IN ('build_events', 'build_attributes')").pluck().get());
  } catch {
    eventsTableBytes = undefined; // dbstat not compiled in
  }
  let tables: Record<string, number> = {};
  try {
    const t = handle.sqlite!.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all() as { name: string; bytes: number }[];
    tables = Object.fromEntries(t.map((r) => [r.name, Math.round(r.bytes / BUILDS)]));
  } catch {
    // dbstat not compiled in
  }
  return { name, store, dir, ingestSeconds, fileBytes, eventsTableBytes, tables, exportRuns: [], exportCpu: [], decodedRuns: [], decodedCpu: [], events: 0 };
}

/**
 * Every build's events as the export sends them: `texts`, the export's path (streamEventTexts, each
 * event's stored text copied into its message); `decoded`, the path before it (streamEvents, each
 * event decoded and formatted again), kept here only as a peer.
 */
async function exportAll(v: Variant, path: 'texts' | 'decoded'): Promise<void> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let events = 0;
  let bytes = 0;
  for await (const b of v.store.streamBuilds({ visibility: SEE_EVERYTHING })) {
    let sequence = 0;
    if (path === 'texts') for await (const e of v.store.streamEventTexts(b.id)) bytes += buildEventTextMessage(++sequence, e).length;
    else for await (const e of v.store.streamEvents(b.id)) bytes += buildEventMessage(++sequence, e).length;
    events += sequence;
  }
  const used = process.cpuUsage(cpu);
  (path === 'texts' ? v.exportRuns : v.decodedRuns).push((performance.now() - started) / 1000);
  (path === 'texts' ? v.exportCpu : v.decodedCpu).push((used.user + used.system) / 1e6);
  v.events = events;
  if (bytes === 0) throw new Error('nothing exported');
}

const text = await load('text');
const packed = await load('compressed');
// Alternating runs, best of three each: the machine is shared.
for (let r = 0; r < 3; r++) {
  for (const v of r % 2 === 0 ? [text, packed] : [packed, text]) {
    await exportAll(v, 'texts');
    await exportAll(v, 'decoded');
  }
}

const rows = [text, packed].map((v) => {
  const best = Math.min(...v.exportRuns);
  return {
    storage: v.name,
    builds: BUILDS,
    'bytes/build': Math.round(v.fileBytes / BUILDS),
    'events+attributes bytes/build': v.eventsTableBytes === undefined ? null : Math.round(v.eventsTableBytes / BUILDS),
    'ingest builds/s': Math.round(BUILDS / v.ingestSeconds),
    'export builds/s': Math.round(BUILDS / best),
    'export events/s': Math.round(v.events / best),
    'export CPU µs/build': Math.round((Math.min(...v.exportCpu) * 1e6) / BUILDS),
    'former export path CPU µs/build': Math.round((Math.min(...v.decodedCpu) * 1e6) / BUILDS),
  };
});
console.log(`\nStore, ${BUILDS} demo builds (SQLite):`);
console.table(rows);
console.log('\nBytes per build of every table and index (dbstat):');
console.table(Object.fromEntries(Object.keys(text.tables).map((k) => [k, { text: text.tables[k], compressed: packed.tables[k] ?? 0 }])));
const ratios = {
  bytesPerBuild: +(rows[1]!['bytes/build'] / rows[0]!['bytes/build']).toFixed(3),
  eventsBytesPerBuild: rows[0]!['events+attributes bytes/build'] && rows[1]!['events+attributes bytes/build'] ? +(rows[1]!['events+attributes bytes/build'] / rows[0]!['events+attributes bytes/build']).toFixed(3) : null,
  exportThroughput: +(rows[1]!['export builds/s'] / rows[0]!['export builds/s']).toFixed(3),
  /** Builds exported per CPU-second, compressed / text. */
  exportPerCpu: +(rows[0]!['export CPU µs/build'] / rows[1]!['export CPU µs/build']).toFixed(3),
  /** Compressed with the export's path / text read by the former path (decode, then format). */
  exportPerCpuVsFormerTextPath: +(rows[0]!['former export path CPU µs/build'] / rows[1]!['export CPU µs/build']).toFixed(3),
  ingestRate: +(rows[1]!['ingest builds/s'] / rows[0]!['ingest builds/s']).toFixed(3),
};
const goals = { bytesPerBuildAtMost0_4: ratios.bytesPerBuild <= 0.4, exportPerCpuAtLeast0_9: ratios.exportPerCpu >= 0.9 };
console.log('compressed / text:', ratios, 'goals met:', goals);

mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/storage.json', JSON.stringify({ date: new Date().toISOString(), node: process.version, builds: BUILDS, codecs: codecRows, stores: rows, tablesCompressed: packed.tables, tablesText: text.tables, ratios, goals }, null, 2) + '\n');
for (const v of [text, packed]) {
  await v.store.close();
  rmSync(v.dir, { recursive: true, force: true });
}
