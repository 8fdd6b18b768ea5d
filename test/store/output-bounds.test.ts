// Bounds of a build's output at ingest (src/store/ingest/output-bounds.ts): the console log per line,
// each test's output, stack traces and output tails; applied after redaction, so what is stored,
// hashed and exported is the redacted, bounded text. And the redaction of the test and console
// events themselves (their names, messages, stack traces and output are free text).

import { describe, expect, it } from 'vitest';
import { boundOutput, CUT_MARK, DEFAULT_OUTPUT_BOUNDS, headOf, tailOf, type OutputBounds } from '../../src/store/ingest/output-bounds.js';
import { SEE_EVERYTHING, type BuildEvent } from '../../src/store/types.js';
import { ev, id, line, useTestStore } from './support.js';

const bounds: OutputBounds = { consoleBytes: 40, testOutputBytes: 10, stackTraceBytes: 60, outputTailBytes: 40 };
const consoleChunk = (text: string) => ev('ConsoleOutput', { stream: 'stdout', text });

describe('bounding output', () => {
  it('cuts text at a line end within a number of UTF-8 bytes, never inside a character', () => {
    expect(headOf('one\ntwo\nthree\n', 9)).toBe('one\ntwo\n');
    expect(headOf('abcdef', 3)).toBe('abc');
    expect(headOf('ééé', 3)).toBe('é');
    expect(tailOf('one\ntwo\nthree\n', 9)).toBe('three\n');
    expect(tailOf('ééé', 3)).toBe('é');
  });

  it('keeps the console up to the bound, marks the chunk it cut and drops the ones after it', () => {
    const events = [consoleChunk('first line\nsecond line\n'), consoleChunk('third line\nfourth line\n'), consoleChunk('fifth\n'), ev('BuildFinished', { outcome: 'failed' })];
    const out = boundOutput(events, bounds);
    expect(out.map((e) => e.type.eventType)).toEqual(['ConsoleOutput', 'ConsoleOutput', 'BuildFinished']);
    expect(out[0]).toBe(events[0]);
    expect(out[1]!.data).toEqual({ stream: 'stdout', text: 'third line\n', truncated: true });
  });

  it('bounds each test output, stack trace and output tail, and leaves a build within its bounds as it is', () => {
    const long = Array.from({ length: 20 }, (_, i) => `\tat frame${i}(X.java:${i})`).join('\n');
    const events: BuildEvent[] = [
      ev('TestOutput', { id: 1, stream: 'stdout', text: 'abcdefgh' }),
      ev('TestOutput', { id: 1, stream: 'stdout', text: 'ijklmn' }),
      ev('TestOutput', { id: 1, stream: 'stdout', text: 'gone' }),
      ev('TestOutput', { id: 2, stream: 'stderr', text: '0123456789' }),
      ev('TestFinished', { id: 1, outcome: 'failed', failure: { message: 'boom', stackTrace: long } }),
      ev('BuildFinished', { outcome: 'failed', failures: [{ classification: 'non-verification', message: 'm', cause: { outputTail: 'a\n'.repeat(30) + 'last line\n' } }] }),
    ];
    const out = boundOutput(events, bounds);
    expect(out.map((e) => e.data['text'])).toEqual(['abcdefgh', 'ij', '0123456789', undefined, undefined]);
    expect(out[1]!.data['truncated']).toBe(true);
    const trace = (out[3]!.data['failure'] as { stackTrace: string }).stackTrace;
    expect(Buffer.byteLength(trace)).toBeLessThanOrEqual(60);
    expect(trace.startsWith('\tat frame0(X.java:0)\n')).toBe(true);
    expect(trace.endsWith(CUT_MARK)).toBe(true);
    const tail = ((out[4]!.data['failures'] as { cause: { outputTail: string } }[])[0]!.cause.outputTail);
    expect(tail.startsWith(CUT_MARK)).toBe(true);
    expect(tail.endsWith('last line\n')).toBe(true);
    const small = [consoleChunk('ok\n'), ev('TestFinished', { id: 1, outcome: 'failed', failure: { message: 'x', stackTrace: 'short' } })];
    expect(boundOutput(small, DEFAULT_OUTPUT_BOUNDS)).toBe(small);
  });
});

describe('ingesting output (sqlite)', () => {
  const t = useTestStore('sqlite', false, { outputBounds: { ...DEFAULT_OUTPUT_BOUNDS, consoleBytes: 64 } });
  const stored = async (buildId: string) => {
    const out: BuildEvent[] = [];
    for await (const e of t.store.streamEvents(buildId)) out.push(e);
    return out;
  };

  it('stores the console up to the store setting, redacted before it is cut', async () => {
    const buildId = id();
    const secretAtTheCut = `${'x'.repeat(40)} password=hunter2hunter2hunter2\n`;
    const sent = line({ buildId, events: [ev('BuildStarted'), consoleChunk(secretAtTheCut + 'more\n'.repeat(100)), ev('BuildFinished', { outcome: 'succeeded', failures: [] })] });
    const r = await t.store.ingestNdjson(sent);
    expect(r.map((x) => x.status)).toEqual(['stored']);
    const log = (await stored(buildId)).find((e) => e.type.eventType === 'ConsoleOutput')!;
    expect(log.data['truncated']).toBe(true);
    expect(String(log.data['text'])).not.toContain('hunter2');
    expect(Buffer.byteLength(String(log.data['text']))).toBeLessThanOrEqual(64);
    // The same line again is the same build: its bounded form is what was hashed and stored.
    expect((await t.store.ingestNdjson(sent)).map((x) => x.status)).toEqual(['unchanged']);
  });

  it('redacts test names, failure messages, stack traces and test output', async () => {
    const buildId = id();
    await t.store.ingestNdjson(
      line({
        buildId,
        events: [
          ev('BuildStarted'),
          ev('TestStarted', { id: 1, suite: 'acme.LoginTest', name: 'signs in', parameters: 'token=ghp_abcdefghijklmnopqrstuvwxyz0123' }),
          ev('TestOutput', { id: 1, stream: 'stdout', text: 'curl -u admin:s3cr3tpass https://x\n' }),
          ev('TestFinished', { id: 1, outcome: 'failed', failure: { message: 'password=letmein123 rejected', stackTrace: 'at https://bob:hunter2@repo.example.com/x' } }),
          ev('BuildFinished', { outcome: 'failed', failures: [] }),
        ],
      }),
    );
    const text = JSON.stringify(await stored(buildId));
    for (const secret of ['ghp_abcdefghijklmnopqrstuvwxyz0123', 's3cr3tpass', 'letmein123', 'hunter2']) expect(text).not.toContain(secret);
    expect(((await t.store.getBuild(buildId, SEE_EVERYTHING))!.attributes['failedTest'])).toEqual(['acme.LoginTest.signs in']);
  });
});
