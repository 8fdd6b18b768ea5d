import * as zlib from 'node:zlib';
import { demoBuilds } from '../src/store/demo-data.js';
import { encodeEvents, packEvents, unpackEvents } from '../src/store/event-codec.js';
import { EVENT_DICTIONARY_1 } from '../src/store/compact-dictionary.js';
const NOW = Date.UTC(2026, 0, 15);
const full = [...demoBuilds({ builds: 2000, seed: 1, now: NOW })].map((l) => packEvents(encodeEvents((JSON.parse(l) as { events: never[] }).events)));
const packed = full.map((p) => p.subarray(1));
const dict = Buffer.from(EVENT_DICTIONARY_1);
function time(name: string, f: (b: Buffer, i: number) => unknown) {
  let best = Infinity;
  for (let r = 0; r < 5; r++) {
    const t = process.cpuUsage();
    packed.forEach((p, i) => f(p, i));
    const u = process.cpuUsage(t);
    best = Math.min(best, (u.user + u.system) / packed.length);
  }
  console.log(name.padEnd(40), best.toFixed(2), 'µs/chunk');
}
for (let k = 0; k < 2; k++) {
time('inflateRawSync dict', (b) => zlib.inflateRawSync(b, { dictionary: dict }));
time('inflateRawSync dict+toString', (b) => zlib.inflateRawSync(b, { dictionary: dict }).toString());
time('unpackEvents(max)', (b, i) => unpackEvents(full[i]!, 65536));
time('new InflateRaw dict', () => new zlib.InflateRaw({ dictionary: dict }).close());
time('new InflateRaw', () => new zlib.InflateRaw().close());
time('Buffer.alloc 16k', () => Buffer.allocUnsafe(16384));
}
const z = new zlib.InflateRaw({ dictionary: dict }) as any;
const out = Buffer.allocUnsafe(65536);
let err: unknown; z.on('error', (e: unknown) => { err = e; });
const ref = packed.map((p) => zlib.inflateRawSync(p, { dictionary: dict }).toString());
function reuse(b: Buffer): string {
  z.reset();
  z._handle.writeSync(zlib.constants.Z_FINISH, b, 0, b.length, out, 0, out.length);
  if (err) throw err;
  const [availOut, availIn] = z._writeState;
  if (availIn !== 0 || availOut === 0) throw new Error('too big');
  return out.toString('utf8', 0, out.length - availOut);
}
packed.forEach((p, i) => { if (reuse(p) !== ref[i]) throw new Error('mismatch ' + i); });
for (let k = 0; k < 2; k++) time('reused handle + toString', (b) => reuse(b));
