// How events are stored: each chunk is a JSON array of compact tuples
// `[timestamp, eventType, majorVersion, minorVersion, data]`, about half the size of the ingest
// form (the repeated `"type":{...}` keys dominate a build's bytes), which matters because the
// event bytes are most of what ingest writes.

import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createInflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';
import { canonicalJson } from './canonical.js';
import { ATTRIBUTES_DICTIONARY_2, EVENT_DICTIONARY_1 } from './compact-dictionary.js';
import type { BuildEvent } from './types.js';

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

function packWith(format: number, text: string): Buffer {
  const deflated = deflateRawSync(Buffer.from(text, 'utf8'), { level: 6, dictionary: dictionaryOf(format) });
  const out = Buffer.allocUnsafe(deflated.length + 1);
  out[0] = format;
  deflated.copy(out, 1);
  return out;
}

/** The stored form of a chunk's encoded events. */
export function packEvents(json: string): Buffer {
  return packWith(PACK_FORMAT, json);
}

/** The stored form of a build's attributes JSON (build_attributes.attributes_packed). */
export function packAttributes(json: string): Buffer {
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
  const body = Buffer.from(packed.buffer, packed.byteOffset + 1, packed.byteLength - 1);
  const options = { dictionary: dictionaryOf(packed[0]), ...(maxBytes === undefined ? {} : { maxOutputLength: maxBytes }) };
  try {
    return inflateRawSync(body, options).toString('utf8');
  } catch (e) {
    if (maxBytes !== undefined && (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
    throw e;
  }
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
