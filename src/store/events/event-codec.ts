// How events are stored: each chunk is a JSON array of compact tuples
// `[timestamp, eventType, majorVersion, minorVersion, data]`, about half the size of the ingest
// form (the repeated `"type":{...}` keys dominate a build's bytes), which matters because the
// event bytes are most of what ingest writes.

import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { constants as zlibConstants, createInflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';
import { canonicalJson } from './canonical.js';
import { ATTRIBUTES_DICTIONARY_2, EVENT_DICTIONARY_1 } from './compact-dictionary.js';
import type { BuildEvent, BuildEventText } from '../types.js';

type Tuple = [number, string, number, number, Readonly<Record<string, unknown>>];

export function encodeEvents(events: readonly BuildEvent[]): string {
  const tuples = new Array<Tuple>(events.length);
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    tuples[i] = [e.timestamp, e.type.eventType, e.type.majorVersion, e.type.minorVersion, e.data];
  }
  return JSON.stringify(tuples);
}

function fromTuple(tuple: Tuple): BuildEvent {
  const [timestamp, eventType, majorVersion, minorVersion, data] = tuple;
  return { timestamp, type: { majorVersion, minorVersion, eventType }, data };
}

export function decodeEvents(json: string): BuildEvent[] {
  const tuples = JSON.parse(json) as Tuple[];
  const out = new Array<BuildEvent>(tuples.length);
  for (let i = 0; i < tuples.length; i++) out[i] = fromTuple(tuples[i]!);
  return out;
}

/** One element of a stored chunk (see event-splitter.ts, which finds them). */
export function decodeEvent(tupleJson: string): BuildEvent {
  return fromTuple(JSON.parse(tupleJson) as Tuple);
}

/** An integer as JSON.stringify writes it (up to 15 digits, all exact): other forms take the slow way. */
const INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

/**
 * One element of a stored chunk as the text `JSON.stringify({timestamp, type, data: data ?? {}})`
 * makes of `decodeEvent(tupleJson)`, without decoding `data`: the stored tuple was itself made by
 * JSON.stringify, whose output JSON.stringify(JSON.parse(…)) reproduces exactly (same escapes,
 * same number forms, keys in the order parsed), so its text can be copied as it is. This is the
 * export's hot path (docs/store.md "Compact events"). An element of any other shape than
 * `[number,"string",number,number,{…}]` takes the slow way, decode then format. The data is not
 * scanned: everything after the fourth comma up to the closing bracket is taken as the data
 * object, which holds for every tuple encodeEvents writes (always five elements).
 */
export function eventText(tupleJson: string): BuildEventText {
  const t = tupleJson;
  const n = t.length;
  // `[timestamp,`
  const c1 = t.indexOf(',', 1);
  // The event type's string token: scan to its closing quote, skipping escapes.
  let end = -1;
  let escaped = false;
  if (t.charCodeAt(0) === 0x5b && c1 > 1 && t.charCodeAt(c1 + 1) === 0x22) {
    for (let i = c1 + 2; i < n; i++) {
      const c = t.charCodeAt(i);
      if (c === 0x5c) {
        escaped = true;
        i++;
      } else if (c === 0x22) {
        end = i;
        break;
      }
    }
  }
  const c3 = end > 0 && t.charCodeAt(end + 1) === 0x2c ? t.indexOf(',', end + 2) : -1;
  const c4 = c3 > 0 ? t.indexOf(',', c3 + 1) : -1;
  if (c4 > 0 && t.charCodeAt(c4 + 1) === 0x7b && t.charCodeAt(n - 1) === 0x5d && t.charCodeAt(n - 2) === 0x7d) {
    const timestamp = t.slice(1, c1);
    const major = t.slice(end + 2, c3);
    const minor = t.slice(c3 + 1, c4);
    if (INTEGER.test(timestamp) && INTEGER.test(major) && INTEGER.test(minor)) {
      const typeToken = t.slice(c1 + 1, end + 1);
      const eventType = escaped ? (JSON.parse(typeToken) as string) : typeToken.slice(1, -1);
      return {
        eventType,
        json: `{"timestamp":${timestamp},"type":{"majorVersion":${major},"minorVersion":${minor},"eventType":${typeToken}},"data":${t.slice(c4 + 1, n - 1)}}`,
      };
    }
  }
  const e = decodeEvent(t);
  return { eventType: e.type.eventType, json: JSON.stringify({ timestamp: e.timestamp, type: e.type, data: e.data ?? {} }) };
}

/** The encoded events with every object's keys sorted: equal iff the events mean the same. */
export function canonicalEvents(json: string): string {
  return canonicalJson(JSON.parse(json));
}

// Compressed chunks (store migration 0008, docs/store.md "Compact events"): a chunk's encoded
// events are stored in `build_events.events_packed` as one format byte followed by raw DEFLATE
// (level 6) with a preset dictionary, and `events` is left empty. The format byte names the
// dictionary, which can never change for stored data: a new dictionary is a new format.

/** Format 1: raw DEFLATE with EVENT_DICTIONARY_1 (event chunks). */
export const PACK_FORMAT = 1;
/** Format 2: raw DEFLATE with ATTRIBUTES_DICTIONARY_2 (a build's derived attributes JSON). */
export const ATTRIBUTES_FORMAT = 2;
const DICTIONARIES: ReadonlyMap<number, Buffer> = new Map([
  [PACK_FORMAT, Buffer.from(EVENT_DICTIONARY_1, 'utf8')],
  [ATTRIBUTES_FORMAT, Buffer.from(ATTRIBUTES_DICTIONARY_2, 'utf8')],
]);

function dictionaryOf(format: number | undefined): Buffer {
  const d = format === undefined ? undefined : DICTIONARIES.get(format);
  if (d === undefined) throw new Error(`Stored event chunk of unknown format ${String(format)}`);
  return d;
}

function packWith(format: number, text: string): Uint8Array {
  const deflated = deflateRawSync(Buffer.from(text, 'utf8'), { level: 6, dictionary: dictionaryOf(format) });
  // A plain Uint8Array of its own, exactly its size (not a slice of Node's shared Buffer pool): a
  // worker thread that prepared it sends it whole, and it arrives as the same type it left.
  const out = new Uint8Array(deflated.length + 1);
  out[0] = format;
  out.set(deflated, 1);
  return out;
}

/** The stored form of a chunk's encoded events. */
export function packEvents(json: string): Uint8Array {
  return packWith(PACK_FORMAT, json);
}

/** The stored form of a build's attributes JSON (build_attributes.attributes_packed). */
export function packAttributes(json: string): Uint8Array {
  return packWith(ATTRIBUTES_FORMAT, json);
}

/**
 * A build's attributes JSON as a listing reads it: text (stored before 0008, or by a store that
 * does not compress), or bytes, which are compressed when they start with a format byte (JSON
 * text never starts with a control character) and UTF-8 text otherwise (PostgreSQL's listing
 * reads either column as bytea).
 */
export function storedAttributes(value: string | Uint8Array | null | undefined): string {
  if (value === null || value === undefined) return '{}';
  if (typeof value === 'string') return value;
  if (value.byteLength > 0 && value[0]! < 0x20) return unpackEvents(value)!;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
}

/**
 * The encoded events of a compressed chunk, at once. With `maxBytes`, undefined when they are
 * longer than that (a reader then inflates them as a stream, `inflateSlices`).
 */
export function unpackEvents(packed: Uint8Array, maxBytes?: number): string | undefined {
  const format = packed[0];
  const dictionary = dictionaryOf(format);
  const body = Buffer.from(packed.buffer, packed.byteOffset + 1, packed.byteLength - 1);
  const small = inflateSmall(format!, body, maxBytes);
  if (small !== undefined) return small;
  const options = { dictionary, ...(maxBytes === undefined ? {} : { maxOutputLength: maxBytes }) };
  try {
    return inflateRawSync(body, options).toString('utf8');
  } catch (e) {
    if (maxBytes !== undefined && (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
    throw e;
  }
}

// Inflating a small chunk with inflateRawSync costs about 12 CPU µs, of which only 3-4 are the
// inflate: the rest is making node:zlib's InflateRaw (a Transform stream and a zlib handle) for
// every call. So small bodies go through one inflater per format, reset between bodies (reset()
// sets the preset dictionary again), whose zlib handle is driven synchronously the way
// inflateRawSync drives its own (`_handle.writeSync`, `_writeState`: node:zlib internals, stable
// since Node 10, checked before use). The inflate is synchronous, so one inflater per thread serves
// every reader. Whatever this path cannot answer for certain (text longer than its buffer, input
// left over, an error, a zlib without these internals) goes to inflateRawSync, which gives the
// answer or the error.

/** The parts of node:zlib's InflateRaw that inflateSmall drives. */
interface ReusableInflater {
  reset(): void;
  readonly destroyed: boolean;
  readonly _handle: { writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void };
  /** [bytes of output space left, bytes of input left] after writeSync. */
  readonly _writeState: Uint32Array;
}

const SMALL_OUTPUT = Buffer.allocUnsafe(64 * 1024);
const inflaters = new Map<number, ReusableInflater | null>();

function reusableInflater(format: number): ReusableInflater | undefined {
  let z = inflaters.get(format);
  if (z === undefined) {
    const candidate = createInflateRaw({ dictionary: dictionaryOf(format) });
    const internals = candidate as unknown as Partial<ReusableInflater>;
    const usable = typeof internals._handle?.writeSync === 'function' && internals._writeState instanceof Uint32Array && internals._writeState.length >= 2;
    // An error destroys the stream and is emitted later: it is answered by inflateRawSync instead.
    candidate.on('error', () => {});
    z = usable ? (candidate as unknown as ReusableInflater) : null;
    if (!usable) candidate.destroy();
    inflaters.set(format, z);
  }
  return z ?? undefined;
}

/** Inflates `body` through the reused inflater; undefined when inflateRawSync must (see above). */
function inflateSmall(format: number, body: Buffer, maxBytes: number | undefined): string | undefined {
  const z = reusableInflater(format);
  if (z === undefined) return undefined;
  try {
    z.reset();
    z._handle.writeSync(zlibConstants.Z_FINISH, body, 0, body.byteLength, SMALL_OUTPUT, 0, SMALL_OUTPUT.length);
  } catch {
    inflaters.delete(format);
    return undefined;
  }
  if (z.destroyed) {
    inflaters.delete(format);
    return undefined;
  }
  const outLeft = z._writeState[0]!;
  const inLeft = z._writeState[1]!;
  const length = SMALL_OUTPUT.length - outLeft;
  if (outLeft === 0 || inLeft !== 0 || (maxBytes !== undefined && length > maxBytes)) return undefined;
  return SMALL_OUTPUT.toString('utf8', 0, length);
}

/** The encoded events of a stored chunk, compressed or not (rows written before 0008). */
export function storedEvents(events: string, packed: Uint8Array | null | undefined): string {
  return packed === null || packed === undefined ? events : unpackEvents(packed)!;
}

/**
 * The encoded events of a compressed chunk whose bytes arrive in slices, as text in pieces of
 * at most about 64 KiB: the inflater holds its 32 KiB window and one output piece, and takes the
 * next slice only when the reader has taken the text of the last (stream back-pressure).
 */
export async function* inflateSlices(slices: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const iterator = slices[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done === true || first.value.byteLength === 0) throw new Error('Stored event chunk is empty');
  const head = first.value;
  const inflater = createInflateRaw({ dictionary: dictionaryOf(head[0]), chunkSize: 64 * 1024 });
  const source = Readable.from(
    (async function* () {
      yield Buffer.from(head.buffer, head.byteOffset + 1, head.byteLength - 1);
      for (;;) {
        const next = await iterator.next();
        if (next.done === true) return;
        yield next.value;
      }
    })(),
    { objectMode: false, highWaterMark: 1 },
  );
  source.on('error', (e) => inflater.destroy(e));
  source.pipe(inflater);
  const text = new StringDecoder('utf8');
  try {
    for await (const piece of inflater as AsyncIterable<Buffer>) {
      const s = text.write(piece);
      if (s !== '') yield s;
    }
    const rest = text.end();
    if (rest !== '') yield rest;
  } finally {
    source.destroy();
    inflater.destroy();
  }
}
