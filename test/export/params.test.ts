import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isStreaming, parseBuildId, parseEventsResume, parseEventTypes, parseSinceDate } from '../../src/export/params.js';
import { parseExportOptions, DEFAULT_EXPORT_OPTIONS } from '../../src/export/options.js';
import { acceptsGzip } from '../../src/export/sink.js';

const NOW = 1_767_225_600_000;

describe(':date of /builds/since/:date', () => {
  it('accepts 0, epoch milliseconds up to now, and now', () => {
    expect(parseSinceDate('0', NOW)).toEqual({ kind: 'instant', at: 0 });
    expect(parseSinceDate(String(NOW), NOW)).toEqual({ kind: 'instant', at: NOW });
    expect(parseSinceDate('now', NOW)).toEqual({ kind: 'now' });
  });

  it('refuses a future time with a 400 naming the server time', () => {
    const r = parseSinceDate(String(NOW + 1), NOW);
    expect(r).toMatchObject({ kind: 'refusal', status: 400, extensions: { parameter: 'date', serverTime: NOW } });
    expect((r as { detail: string }).detail).toMatch(/future/);
  });

  it('refuses anything that is not 0, digits or now (property)', () => {
    fc.assert(
      fc.property(fc.string().filter((s) => !/^[0-9]+$/.test(s) && s !== 'now'), (s) => {
        expect(parseSinceDate(s, NOW)).toMatchObject({ kind: 'refusal', status: 400 });
      }),
    );
    expect(parseSinceDate('NOW', NOW)).toMatchObject({ status: 400 });
    expect(parseSinceDate('-1', NOW)).toMatchObject({ status: 400 });
    expect(parseSinceDate('1e3', NOW)).toMatchObject({ status: 400 });
    expect(parseSinceDate('99999999999999999999', NOW)).toMatchObject({ status: 400 });
  });

  it('any instant from 0 to now is accepted as itself (property)', () => {
    fc.assert(
      fc.property(fc.nat(1_767_225), fc.nat(599_999), (high, low) => {
        const t = high * 1_000_000 + low;
        expect(parseSinceDate(String(t), NOW)).toEqual({ kind: 'instant', at: t });
      }),
    );
  });
});

describe('build IDs, eventTypes, Last-Event-ID, stream', () => {
  it('build IDs are 13 characters of 0-9a-z', () => {
    expect(parseBuildId('abcdefghij123')).toBe('abcdefghij123');
    for (const bad of ['abcdefghij12', 'abcdefghij1234', 'ABCDEFGHIJ123', 'abcdefghij12-', '']) {
      expect(parseBuildId(bad)).toMatchObject({ kind: 'refusal', status: 400 });
    }
  });

  it('eventTypes is comma-separated and case-sensitive; empty means all', () => {
    expect(parseEventTypes(undefined)).toBeUndefined();
    expect(parseEventTypes('')).toBeUndefined();
    expect(parseEventTypes('BuildStarted,BuildFinished')).toEqual(['BuildStarted', 'BuildFinished']);
    expect(parseEventTypes(' buildStarted , BuildStarted,')).toEqual(['buildStarted', 'BuildStarted']);
    expect(parseEventTypes(['A', 'B,C'])).toEqual(['A', 'B', 'C']);
    expect(parseEventTypes('Build Started')).toMatchObject({ kind: 'refusal', status: 400 });
  });

  it('Last-Event-ID of an events stream is the build ID or a running number', () => {
    const id = 'abcdefghij123';
    expect(parseEventsResume(undefined, id)).toEqual({ kind: 'start' });
    expect(parseEventsResume(' ', id)).toEqual({ kind: 'start' });
    expect(parseEventsResume(id, id)).toEqual({ kind: 'afterBuild' });
    expect(parseEventsResume('0', id)).toEqual({ kind: 'afterBuild' });
    expect(parseEventsResume('42', id)).toEqual({ kind: 'afterEvent', sequence: 42 });
    expect(parseEventsResume('zzzzzzzzzzzzz', id)).toMatchObject({ kind: 'refusal', status: 400 });
    expect(parseEventsResume('-1', id)).toMatchObject({ kind: 'refusal', status: 400 });
  });

  it('stream is on with any value, even empty', () => {
    expect(isStreaming({ stream: '' })).toBe(true);
    expect(isStreaming({ stream: 'false' })).toBe(true);
    expect(isStreaming({})).toBe(false);
  });
});

describe('Accept-Encoding', () => {
  it('admits gzip, x-gzip and * with q > 0', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('deflate, gzip;q=0.5')).toBe(true);
    expect(acceptsGzip('GZIP')).toBe(true);
    expect(acceptsGzip('x-gzip')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip;q=0, *')).toBe(false);
    expect(acceptsGzip('br, deflate')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });
});

describe('the export config section', () => {
  it('defaults: heartbeat every 10 s, Retry-After 5 s, no anonymous access, any CORS origin, gzip level 1', () => {
    expect(parseExportOptions(undefined)).toEqual(DEFAULT_EXPORT_OPTIONS);
    expect(DEFAULT_EXPORT_OPTIONS).toEqual({ heartbeatMs: 10_000, retryAfterSeconds: 5, anonymousAccess: false, corsOrigins: '*', gzipLevel: 1 });
  });

  it('reads each setting', () => {
    expect(parseExportOptions({ heartbeatMs: 500, retryAfterSeconds: 2, anonymousAccess: true, corsOrigins: ['https://a.example'], gzipLevel: 9 })).toEqual({
      heartbeatMs: 500,
      retryAfterSeconds: 2,
      anonymousAccess: true,
      corsOrigins: ['https://a.example'],
      gzipLevel: 9,
    });
    expect(() => parseExportOptions({ gzipLevel: 0 })).toThrow(/export\.gzipLevel/);
  });

  it('names the faulty key', () => {
    expect(() => parseExportOptions({ heartbeatMs: 'fast' })).toThrow(/export\.heartbeatMs/);
    expect(() => parseExportOptions({ heartbeatMS: 5 })).toThrow(/export\.heartbeatMS: unknown property \(did you mean "heartbeatMs"\?\)/);
    expect(() => parseExportOptions({ corsOrigins: ['a.example'] })).toThrow(/export\.corsOrigins/);
    expect(() => parseExportOptions([1])).toThrow(/export: must be an object, found array/);
    expect(() => parseExportOptions({ anonymousAccess: 'yes' })).toThrow(/anonymousAccess/);
  });
});
