// The Bazel event stream to build mapping on small hand-made streams (the real streams are in the
// end-to-end and replay tests), and the laws of the build IDs the agents make.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { decodeBazelEvent, decodeBazelEventOf, encodeBazelEvent } from '../../src/bes/protocol.js';
import { bepToBuild, BepError, buildIdFromInvocation, parseBepJson, READ_PAYLOADS, reduceBepEvent, type BepEvent, type TimedBepEvent } from '../../src/bes/bep-build.js';
import { newBuildId } from '../../src/agents/common-build.js';
import { withoutUserInfo } from '../../src/agents/common-env.js';
import { agentContract } from '../../src/agents/contract.js';

const started = (extra: Record<string, unknown> = {}): TimedBepEvent => ({
  event: { id: { started: {} }, started: { uuid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', startTimeMillis: '1000', command: 'test', workspaceDirectory: '/src/app', ...extra } },
});
const finished = (code: number, name: string): TimedBepEvent => ({ event: { id: { buildFinished: {} }, finished: { finishTimeMillis: '5000', exitCode: code === 0 ? { name } : { name, code } } } });
const pattern = (...p: string[]): TimedBepEvent => ({ event: { id: { pattern: { pattern: p } }, expanded: {} } });
const configured = (label: string, kind: string): TimedBepEvent => ({ event: { id: { targetConfigured: { label } }, configured: { targetKind: kind } } });
const completed = (label: string, success: boolean): TimedBepEvent => ({ event: { id: { targetCompleted: { label } }, completed: success ? { success: true } : {} } });
const summary = (label: string, status: string): TimedBepEvent => ({ event: { id: { testSummary: { label } }, testSummary: { overallStatus: status } } });
const progress = (n: number, output: { stdout?: string; stderr?: string }): TimedBepEvent => ({ event: { id: { progress: { opaqueCount: n } }, progress: output } });
const consoleOf = (build: ReturnType<typeof bepToBuild>) => build.events.filter((e) => e.type.eventType === 'ConsoleOutput');

describe('bepToBuild', () => {
  it('maps patterns (with exclusions), targets, cached tests and metadata', () => {
    const build = bepToBuild(
      [
        started(),
        pattern('//...', '-//legacy/...'),
        { event: { id: { buildMetadata: {} }, buildMetadata: { metadata: { TAGS: 'nightly, e2e', ROLE: 'CI', USER: 'ci-bot' } } } },
        configured('//:lib', 'genrule rule'),
        configured('//:t', 'sh_test rule'),
        completed('//:lib', true),
        completed('//:t', true),
        { event: { id: { testResult: { label: '//:t' } }, testResult: { status: 'PASSED', cachedLocally: true, testAttemptStartMillisEpoch: '2000', testAttemptDurationMillis: '300' } } },
        summary('//:t', 'PASSED'),
        finished(0, 'SUCCESS'),
      ],
      'abcdefghijklm',
    );
    const byType = (t: string) => build.events.filter((e) => e.type.eventType === t).map((e) => e.data);
    expect(byType('BuildRequestedTasks')).toEqual([{ requested: ['//...'], excluded: ['//legacy/...'], command: 'test' }]);
    expect(byType('ProjectStructure')).toEqual([{ rootProjectName: 'app' }]);
    expect(byType('BuildAgent')).toEqual([{ username: 'ci-bot' }]);
    expect(byType('UserTag').map((d) => d['tag'])).toEqual(['nightly', 'e2e', 'CI']);
    expect(byType('TaskFinished').map((d) => [d['path'], d['outcome']])).toEqual([
      ['//:lib', 'success'],
      ['//:t', 'up-to-date'],
    ]);
    // A cached result's attempt times are those of the run that made it: here it takes no time.
    const test = build.events.filter((e) => e.type.eventType.startsWith('Task') && e.data['path'] === '//:t').map((e) => e.timestamp);
    expect(test).toEqual([5000, 5000]);
    expect(byType('BuildFinished')).toEqual([{ outcome: 'succeeded', failures: [], exitCode: 0 }]);
  });

  it('times targets by what the stream says: from the end of analysis to completion, a test by its attempt, never the whole build', () => {
    const at = (e: TimedBepEvent, time: number): TimedBepEvent => ({ ...e, time });
    const events: TimedBepEvent[] = [
      at(started(), 1000),
      at(configured('//:gen', 'genrule rule'), 1200),
      at(configured('//:t', 'sh_test rule'), 9000),
      at(completed('//:gen', true), 9500),
      at({ event: { id: { testResult: { label: '//:t' } }, testResult: { status: 'PASSED', testAttemptStartMillisEpoch: '9600', testAttemptDurationMillis: '300' } } }, 9950),
      at(completed('//:t', true), 9960),
      at(finished(0, 'SUCCESS'), 10_000),
    ];
    const spans = (b: ReturnType<typeof bepToBuild>) => {
      const start = new Map(b.events.filter((e) => e.type.eventType === 'TaskStarted').map((e) => [e.data['path'], e.timestamp]));
      return Object.fromEntries(b.events.filter((e) => e.type.eventType === 'TaskFinished').map((e) => [e.data['path'] as string, [start.get(e.data['path']), e.timestamp]]));
    };
    // The genrule was configured at +0.2 s but cannot have run before analysis ended at +8 s.
    expect(spans(bepToBuild(events, 'abcdefghijklm'))).toEqual({ '//:gen': [9000, 9500], '//:t': [9600, 9900] });
    // A file of events has no times: the genrule is an instant at the build's end, the test keeps its attempt.
    const untimed = events.map(({ event }) => ({ event }));
    expect(spans(bepToBuild(untimed, 'abcdefghijklm'))).toEqual({ '//:gen': [5000, 5000], '//:t': [9600, 9900] });
    // A test attempt from before the build (a cached result) is an instant at its completion.
    const before = events.map((e) => (e.event['testResult'] ? { ...e, event: { ...e.event, testResult: { status: 'PASSED', testAttemptStartMillisEpoch: '10', testAttemptDurationMillis: '300' } } } : e));
    expect(spans(bepToBuild(before, 'abcdefghijklm'))['//:t']).toEqual([9960, 9960]);
  });

  it('classifies a target that did not build and an aborted load as non-verification, a failed test as verification', () => {
    const build = bepToBuild(
      [
        started(),
        pattern('//...'),
        configured('//:broken', 'genrule rule'),
        completed('//:broken', false),
        configured('//:t', 'sh_test rule'),
        summary('//:t', 'TIMEOUT'),
        { event: { id: { unconfiguredLabel: { label: '//missing:x' } }, aborted: { reason: 'LOADING_FAILURE', description: 'no such package' } } },
        { event: { id: { targetCompleted: { label: '//:skipped' } }, aborted: { reason: 'SKIPPED' } } },
        finished(1, 'BUILD_FAILURE'),
      ],
      'abcdefghijklm',
    );
    expect(build.events.at(-1)!.data).toEqual({
      outcome: 'failed',
      exitCode: 1,
      failures: [
        { classification: 'non-verification', message: 'Target //:broken failed to build' },
        { classification: 'verification', message: 'Test //:t TIMEOUT' },
        { classification: 'non-verification', message: '//missing:x aborted (LOADING_FAILURE): no such package' },
      ],
    });
  });

  it('leaves out user and host names when the build metadata asks for it', () => {
    const status: TimedBepEvent = { event: { id: { workspaceStatus: {} }, workspaceStatus: { item: [{ key: 'BUILD_USER', value: 'alice' }, { key: 'BUILD_HOST', value: 'box' }] } } };
    const meta = (v: string): TimedBepEvent => ({ event: { id: { buildMetadata: {} }, buildMetadata: { metadata: { BUILDSCOPE_REDACT: v } } } });
    const agentOf = (events: TimedBepEvent[]) => bepToBuild(events, 'abcdefghijklm').events.find((e) => e.type.eventType === 'BuildAgent')!.data;
    expect(agentOf([started(), status, finished(0, 'SUCCESS')])).toEqual({ username: 'alice', publicHostname: 'box', localHostname: 'box' });
    expect(agentOf([started(), status, meta('user'), finished(0, 'SUCCESS')])).toEqual({ publicHostname: 'box', localHostname: 'box' });
    expect(agentOf([started(), status, meta('all'), finished(0, 'SUCCESS')])).toEqual({});
  });

  it("turns the progress events' text into the console, in order, empty text left out", () => {
    const events: TimedBepEvent[] = [
      started(),
      progress(0, { stderr: 'Loading: 0 packages loaded\n' }),
      progress(1, {}),
      progress(2, { stdout: '', stderr: 'ERROR: /src/app/broken/BUILD:1:8: Executing genrule //broken:broken failed: (Exit 1)\n' }),
      // Bazel 4 writes the test summary (stdout) after its last INFO line (stderr) of the same event.
      progress(3, { stdout: '//:t    FAILED in 0.2s\n', stderr: 'INFO: Build completed, 1 test FAILED\n' }),
      finished(1, 'BUILD_FAILURE'),
    ];
    const build = bepToBuild(events, 'abcdefghijklm');
    expect(consoleOf(build).map((e) => e.data)).toEqual([
      { stream: 'stderr', text: 'Loading: 0 packages loaded\n' },
      { stream: 'stderr', text: 'ERROR: /src/app/broken/BUILD:1:8: Executing genrule //broken:broken failed: (Exit 1)\n' },
      { stream: 'stderr', text: 'INFO: Build completed, 1 test FAILED\n' },
      { stream: 'stdout', text: '//:t    FAILED in 0.2s\n' },
    ]);
    // Captured, so said; test output capture is not stated for Bazel.
    expect(build.events.filter((e) => e.type.eventType === 'ServerSettings').map((e) => e.data)).toEqual([{ buildOutputCapturingEnabled: true }]);
    // Before the build's end, which stays last.
    expect(build.events.at(-1)!.type.eventType).toBe('BuildFinished');
    // A file of events has no times: the console is at the build's end; over the live stream, at its events' times, within the build.
    expect(consoleOf(build).map((e) => e.timestamp)).toEqual([5000, 5000, 5000, 5000]);
    const timed = events.map((e, i) => ({ ...e, time: [900, 1500, 1600, 2000, 6000, 5000][i] }));
    expect(consoleOf(bepToBuild(timed, 'abcdefghijklm')).map((e) => e.timestamp)).toEqual([1500, 2000, 5000, 5000]);
    // No console, no claim about it.
    const quiet = bepToBuild([started(), progress(0, { stdout: '', stderr: '' }), finished(0, 'SUCCESS')], 'abcdefghijklm');
    expect(quiet.events.filter((e) => ['ConsoleOutput', 'ServerSettings'].includes(e.type.eventType))).toEqual([]);
  });

  it("bounds the build's console by the agent contract, the last chunk kept saying it was cut", () => {
    const limit = agentContract().bounds.consoleChars;
    const half = 'a'.repeat(limit / 2);
    const chunks = (events: TimedBepEvent[]) => consoleOf(bepToBuild([started(), ...events, finished(0, 'SUCCESS')], 'abcdefghijklm')).map((e) => e.data);
    // Cut inside a chunk: the rest of it and every later chunk are left out.
    const cut = chunks([progress(0, { stdout: half }), progress(1, { stderr: half + 'bc' }), progress(2, { stdout: 'later' })]);
    expect(cut.map((d) => [d['stream'], (d['text'] as string).length, d['truncated']])).toEqual([
      ['stdout', limit / 2, undefined],
      ['stderr', limit / 2, true],
    ]);
    // Exactly the bound is not cut; anything after it is, and the last chunk says so.
    expect(chunks([progress(0, { stdout: half }), progress(1, { stdout: half })]).map((d) => d['truncated'])).toEqual([undefined, undefined]);
    expect(chunks([progress(0, { stdout: half }), progress(1, { stdout: half }), progress(2, { stderr: 'x' })]).map((d) => d['truncated'])).toEqual([undefined, true]);
    // One chunk larger than the bound.
    expect(chunks([progress(0, { stderr: 'z'.repeat(limit + 10) })]).map((d) => [(d['text'] as string).length, d['truncated']])).toEqual([[limit, true]]);
  });

  it('names the exit code when a failed build lists no failure', () => {
    const build = bepToBuild([started(), pattern('//...'), finished(2, 'COMMAND_LINE_ERROR')], 'abcdefghijklm');
    expect(build.events.at(-1)!.data['failures']).toEqual([{ classification: 'non-verification', message: 'Bazel exited with COMMAND_LINE_ERROR (2)' }]);
  });

  it('refuses a stream without a start or an end, and a file that is not an event file', () => {
    expect(() => bepToBuild([finished(0, 'SUCCESS')], 'abcdefghijklm')).toThrow(BepError);
    expect(() => bepToBuild([started()], 'abcdefghijklm')).toThrow(/no BuildFinished event/);
    expect(() => parseBepJson('{"id":{}}\nnot json\n')).toThrow(/^line 2: not JSON/);
    expect(() => parseBepJson('[1,2]\n')).toThrow(/^line 1: not a build event/);
  });
});

describe('build IDs', () => {
  it('an invocation ID always gives the same valid build ID, and different invocations different ones', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), (a, b) => {
        const ia = buildIdFromInvocation(a);
        expect(ia).toMatch(/^[0-9a-z]{13}$/);
        expect(buildIdFromInvocation(a)).toBe(ia);
        const sameFirst64 = a.replace(/-/g, '').slice(0, 16).toLowerCase() === b.replace(/-/g, '').slice(0, 16).toLowerCase();
        expect(buildIdFromInvocation(b) === ia).toBe(sameFirst64);
      }),
    );
  });

  it('agent-made build IDs are 13 characters of [0-9a-z]', () => {
    for (let i = 0; i < 2000; i++) expect(newBuildId()).toMatch(/^[0-9a-z]{13}$/);
  });

  it('repository URLs lose their credentials and nothing else', () => {
    expect(withoutUserInfo('https://user:token@github.com/acme/app.git')).toBe('https://github.com/acme/app.git');
    expect(withoutUserInfo('https://github.com/acme/app.git')).toBe('https://github.com/acme/app.git');
    expect(withoutUserInfo('git@github.com:acme/app.git')).toBe('git@github.com:acme/app.git');
  });
});

describe('vendored protocol files', () => {
  it('the googleapis files are unchanged copies of the google-proto-files package (docs/send-your-builds.md)', async () => {
    const { readdirSync, readFileSync, statSync } = await import('node:fs');
    const { join, relative } = await import('node:path');
    const root = 'src/bes/proto/google';
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.proto')) files.push(path);
      }
    };
    walk(root);
    expect(files.length).toBeGreaterThanOrEqual(14);
    for (const file of files) {
      const upstream = join('node_modules/google-proto-files/google', relative(root, file));
      expect(readFileSync(file, 'utf8'), file).toBe(readFileSync(upstream, 'utf8'));
    }
  });
});

describe('reduceBepEvent', () => {
  const recorded = parseBepJson(readFileSync('test/agents/fixtures/bazel/failing-test.bep.json', 'utf8'));
  const reduced = (events: readonly TimedBepEvent[]): TimedBepEvent[] =>
    events.flatMap(({ event, time }) => {
      const r = reduceBepEvent(event);
      return r === undefined ? [] : [{ event: r, ...(time !== undefined ? { time } : {}) }];
    });

  it('keeps what the build is made of: a recorded stream gives the same build from its reduced events', () => {
    expect(bepToBuild(reduced(recorded), 'abcdefghijklm')).toEqual(bepToBuild(recorded, 'abcdefghijklm'));
    // And it keeps a fraction: progress, command lines and file sets are gone.
    expect(JSON.stringify(reduced(recorded)).length).toBeLessThan(JSON.stringify(recorded).length / 4);
  });

  it('the same build for any stream with output, unknown events and unknown fields added (property)', () => {
    const junkEvent = fc.record({
      id: fc.constantFrom({ progress: { opaqueCount: 1 } }, { namedSet: { id: '0' } }, { actionCompleted: { label: '//:x' } }),
      payload: fc.constantFrom('progress', 'namedSetOfFiles', 'action', 'unstructuredCommandLine'),
      text: fc.string({ maxLength: 200 }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(recorded.length), junkEvent), { maxLength: 12 }),
        fc.array(fc.tuple(fc.nat(recorded.length - 1), fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 50 })), { maxLength: 6 }),
        (inserts, extraFields) => {
          const events: TimedBepEvent[] = recorded.map((e, i) => ({ event: { ...e.event }, time: 1_000 + i }));
          for (const [at, name, value] of extraFields) {
            // An unknown field inside an event's payload (a newer Bazel's addition).
            const e = events[at]!.event as Record<string, unknown>;
            const payload = Object.keys(e).find((k) => k !== 'id' && k !== 'children' && k !== 'lastMessage');
            if (payload !== undefined && !['uuid', 'startTimeMillis', 'startTime', 'workspaceDirectory', 'command', 'buildToolVersion', 'item', 'metadata', 'targetKind', 'testSize', 'success', 'cachedLocally', 'testAttemptStartMillisEpoch', 'testAttemptDurationMillis', 'status', 'overallStatus', 'reason', 'description', 'finishTimeMillis', 'finishTime', 'exitCode', 'overallSuccess'].includes(name)) {
              e[payload] = { ...(e[payload] as object), [name]: value };
            }
          }
          for (const [at, j] of inserts) events.splice(at, 0, { event: { id: j.id, [j.payload]: { stdout: j.text } } as BepEvent, time: 1_000 + at });
          expect(bepToBuild(reduced(events), 'abcdefghijklm')).toEqual(bepToBuild(events, 'abcdefghijklm'));
        },
      ),
    );
  });

  it('decodes from the wire only the events of the payloads the build reads', () => {
    for (const { event } of recorded) {
      const bytes = encodeBazelEvent(event);
      const decoded = decodeBazelEventOf(bytes, READ_PAYLOADS);
      if (reduceBepEvent(event) === undefined) expect(decoded).toBeUndefined();
      else expect(decoded).toEqual(decodeBazelEvent(bytes));
    }
    expect(decodeBazelEventOf(encodeBazelEvent({ id: { namedSet: { id: '0' } }, namedSetOfFiles: { files: [{ name: 'x'.repeat(1000) }] } }), READ_PAYLOADS)).toBeUndefined();
    // The console is part of the build.
    expect(decodeBazelEventOf(encodeBazelEvent({ id: { progress: {} }, progress: { stdout: 'x'.repeat(1000) } }), READ_PAYLOADS)).toMatchObject({ progress: { stdout: 'x'.repeat(1000) } });
  });

  it('cuts long strings, so that one event cannot make a large reduced event', () => {
    const r = reduceBepEvent({ id: { started: {} }, started: { uuid: 'u', command: 'x'.repeat(100_000), optionsDescription: 'y'.repeat(100_000) } });
    expect(JSON.stringify(r).length).toBeLessThan(20_000);
  });

  it("keeps the console up to the contract's bound, not the other strings' 16 KiB: the reduced stream has the same console", () => {
    const limit = agentContract().bounds.consoleChars;
    const long = reduceBepEvent({ id: { progress: { opaqueCount: 1 } }, progress: { stderr: 'z'.repeat(200_000), stdout: 'y'.repeat(limit + 500) } });
    expect(long).toEqual({ id: { progress: { opaqueCount: 1 } }, progress: { stderr: 'z'.repeat(200_000), stdout: 'y'.repeat(limit + 1) } });
    const events: TimedBepEvent[] = [started(), progress(0, { stderr: 'w'.repeat(300_000) }), progress(1, { stdout: 'v'.repeat(limit + 500) }), finished(0, 'SUCCESS')];
    const full = bepToBuild(events, 'abcdefghijklm');
    expect(bepToBuild(reduced(events), 'abcdefghijklm')).toEqual(full);
    expect(consoleOf(full).map((e) => [(e.data['text'] as string).length, e.data['truncated']])).toEqual([
      [300_000, undefined],
      [limit - 300_000, true],
    ]);
    // A chunk of exactly the bound is not cut in the reduced stream either.
    const exact: TimedBepEvent[] = [started(), progress(0, { stdout: 'u'.repeat(limit) }), finished(0, 'SUCCESS')];
    expect(bepToBuild(reduced(exact), 'abcdefghijklm')).toEqual(bepToBuild(exact, 'abcdefghijklm'));
  });
});
