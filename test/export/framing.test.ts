import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatComment, formatMessage } from '../../src/export/sse.js';
import { buildData, buildEventMessage, buildMessage } from '../../src/export/messages.js';
import { parseSseText } from './sse-parse.js';
import type { BuildSummary } from '../../src/store/types.js';

const build: BuildSummary = {
  id: 'abcdefghij123',
  availableAt: 1767225600123,
  toolType: 'native',
  toolVersion: '8.10.2',
  agentVersion: '3.19',
  project: null,
  seq: 7,
};

describe('SSE framing', () => {
  it('writes id, event, data and a blank line, in that order', () => {
    expect(formatMessage({ id: '1', event: 'BuildEvent', data: '{"a":1}' })).toBe('id: 1\nevent: BuildEvent\ndata: {"a":1}\n\n');
  });

  it('splits multi-line data over data lines', () => {
    expect(formatMessage({ id: 'x', event: 'e', data: 'a\nb\r\nc' })).toBe('id: x\nevent: e\ndata: a\ndata: b\ndata: c\n\n');
  });

  it('refuses line breaks in id and event', () => {
    expect(() => formatMessage({ id: 'a\nb', event: 'e', data: '' })).toThrow(/line break/);
    expect(() => formatMessage({ id: 'a', event: 'e\r', data: '' })).toThrow(/line break/);
  });

  it('formats comments (heartbeats) as lines starting with a colon', () => {
    expect(formatComment('heartbeat')).toBe(': heartbeat\n\n');
    expect(formatComment()).toBe(':\n\n');
    expect(parseSseText(formatComment('heartbeat'))).toEqual({ events: [], comments: [' heartbeat'] });
  });

  it('round-trips any JSON value through a standard SSE parser (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-z]{1,13}$/), fc.stringMatching(/^[A-Za-z]{1,20}$/), fc.jsonValue(), (id, event, value) => {
        const data = JSON.stringify(value);
        const parsed = parseSseText(formatMessage({ id, event, data }));
        expect(parsed.events).toEqual([{ id, event, data }]);
        expect(JSON.parse(parsed.events[0]!.data)).toEqual(JSON.parse(data));
      }),
    );
  });
});

describe('export messages', () => {
  it('v2 Build data carries buildId, timestamp, toolType, toolVersion, agentVersion', () => {
    expect(buildData(2, build)).toEqual({ buildId: build.id, timestamp: build.availableAt, toolType: 'native', toolVersion: '8.10.2', agentVersion: '3.19' });
    expect(Object.keys(buildData(2, build))).toEqual(['buildId', 'timestamp', 'toolType', 'toolVersion', 'agentVersion']);
  });

  it('v1 Build data carries buildId, timestamp, nativeVersion, pluginVersion', () => {
    expect(buildData(1, build)).toEqual({ buildId: build.id, timestamp: build.availableAt, nativeVersion: '8.10.2', pluginVersion: '3.19' });
  });

  it('a Build message has the build ID as its id and event Build', () => {
    expect(buildMessage(2, build)).toBe(
      `id: abcdefghij123\nevent: Build\ndata: {"buildId":"abcdefghij123","timestamp":1767225600123,"toolType":"native","toolVersion":"8.10.2","agentVersion":"3.19"}\n\n`,
    );
  });

  it('the direct framing of Build and BuildEvent agrees with formatMessage (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-z]{13}$/), fc.string(), fc.string(), fc.nat(), fc.jsonValue(), (id, toolVersion, agentVersion, seq, data) => {
        const b = { ...build, id, toolVersion, agentVersion };
        expect(buildMessage(2, b)).toBe(formatMessage({ id, event: 'Build', data: JSON.stringify(buildData(2, b)) }));
        expect(buildMessage(1, b)).toBe(formatMessage({ id, event: 'Build', data: JSON.stringify(buildData(1, b)) }));
        const event = { timestamp: seq, type: { majorVersion: 1, minorVersion: 0, eventType: 'X' }, data: { v: data } };
        expect(buildEventMessage(seq + 1, event)).toBe(formatMessage({ id: String(seq + 1), event: 'BuildEvent', data: JSON.stringify(event) }));
      }),
    );
  });

  it('a BuildEvent message has the running number as its id', () => {
    const msg = buildEventMessage(3, { timestamp: 5, type: { majorVersion: 1, minorVersion: 0, eventType: 'BuildStarted' }, data: {} });
    expect(msg).toBe('id: 3\nevent: BuildEvent\ndata: {"timestamp":5,"type":{"majorVersion":1,"minorVersion":0,"eventType":"BuildStarted"},"data":{}}\n\n');
  });
});
