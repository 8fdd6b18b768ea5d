// Secrets out of builds, on the Node side: the shared tables (git remotes, redaction cases) run
// through the TypeScript rules every Node agent uses (npm, ingest-bep), the time the patterns take
// on long adversarial strings, and the server's own redaction at ingest, whatever sent the build
// (a line with secrets posted as is, and a Bazel invocation converted by bepToBuild). The Gradle,
// Maven and pytest agents run the same tables in their own tests.

import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bepToBuild, type TimedBepEvent } from '../../src/bes/bep-build.js';
import { newBuildId, toIngestLine, type AgentBuild } from '../../src/agents/common-build.js';
import { withoutUserInfo } from '../../src/agents/common-env.js';
import { redactedBuild } from '../../src/agents/common-send.js';
import { agentSettingsOf, configFileWarning } from '../../src/agents/settings.js';
import fc from 'fast-check';
import { redactIngestEvents, redactStrings, redactText } from '../../src/store/ingest/redact.js';
import { gitRemoteCases, redactionCases } from './redaction-tables.js';
import { startAgentTestServer, type AgentTestServer } from './support.js';

describe('the shared tables with the TypeScript rules', () => {
  it.each(gitRemoteCases.cases.map((c) => [c.name, c] as const))('git remote: %s', (_name, c) => {
    expect(withoutUserInfo(c.remote)).toBe(c.sent);
  });

  it('no secret of the git remote table survives', () => {
    for (const c of gitRemoteCases.cases) for (const s of gitRemoteCases.secrets) expect(withoutUserInfo(c.remote), c.name).not.toContain(s);
  });

  it.each(redactionCases.cases.map((c) => [c.text, c] as const))('redacts %j', (_text, c) => {
    expect(redactText(c.text, redactionCases.listed)).toBe(c.redacted);
  });

  it('redacted text is left as it is by a second pass (the server redacts again what an agent sent)', () => {
    for (const c of redactionCases.cases) expect(redactText(c.redacted, redactionCases.listed)).toBe(c.redacted);
  });

  it.each(redactionCases.adversarial.map((a) => [a.piece, a] as const))('takes time linear in the text: %j repeated', (_piece, a) => {
    const text = a.piece.repeat(a.times);
    const started = performance.now();
    redactText(text, redactionCases.listed);
    const ms = performance.now() - started;
    // ~10-150 ms here on a busy 2-core machine; a pattern that backtracks over the whole text
    // would take minutes. The bound is loose on purpose: only a catastrophic pattern can miss it.
    expect(ms, `${text.length} characters took ${Math.round(ms)} ms`).toBeLessThan(3000);
  });
});

describe('the agents redact what they send', () => {
  it('every string of every event, with the listed values and the access key', () => {
    const build: AgentBuild = {
      buildId: newBuildId(),
      toolType: 'jsbuild',
      toolVersion: '11',
      agentVersion: '0',
      events: [
        { timestamp: 1, type: { majorVersion: 1, minorVersion: 0, eventType: 'BuildRequestedTasks' }, data: { requested: ['run deploy -- --password=hunter2'], excluded: [] } },
        { timestamp: 2, type: { majorVersion: 1, minorVersion: 0, eventType: 'BuildFinished' }, data: { outcome: 'failed', failures: [{ classification: 'non-verification', message: 'curl -u admin:hunter2 with bskabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst and listed-s3cret-value' }] } },
      ],
    };
    const line = toIngestLine(redactedBuild(build, ['listed-s3cret-value']));
    expect(line).not.toContain('hunter2');
    expect(line).not.toContain('bskabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst');
    expect(line).not.toContain('listed-s3cret-value');
    expect(JSON.parse(line).events[1].data.failures[0].message).toBe('curl -u admin:*** with bsk*** and ***');
  });

  it('BUILDSCOPE_REDACT_VALUES (else redactValues= in agent.properties) and the access key are the listed values', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-redact-'));
    try {
      writeFileSync(join(dir, 'agent.properties'), 'redactValues=from-file-1, from-file-2\naccessKey=the-key\n', { mode: 0o600 });
      expect(agentSettingsOf({ BUILDSCOPE_AGENT_DIR: dir }).redactValues).toEqual(['from-file-1', 'from-file-2', 'the-key']);
      expect(agentSettingsOf({ BUILDSCOPE_AGENT_DIR: dir, BUILDSCOPE_REDACT_VALUES: 'a-secret' }).redactValues).toEqual(['a-secret', 'the-key']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('warns, in one line, when agent.properties can be read by others, and not when it is 0600', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-redact-'));
    try {
      const file = join(dir, 'agent.properties');
      writeFileSync(file, 'accessKey=k\n', { mode: 0o644 });
      expect(statSync(file).mode & 0o777).toBe(0o644 & ~process.umask());
      expect(configFileWarning(file)).toBe(`Buildscope: ${file} can be read by other users (mode 0644); it holds an access key: chmod 600 it`);
      expect(agentSettingsOf({ BUILDSCOPE_AGENT_DIR: dir }).warning).toBe(configFileWarning(file));
      rmSync(file);
      writeFileSync(file, 'accessKey=k\n', { mode: 0o600 });
      expect(configFileWarning(file)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the server redacts at ingest, whatever sent the build', () => {
  let server: AgentTestServer;
  beforeAll(async () => {
    server = await startAgentTestServer();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  const post = async (line: string) => {
    const r = await fetch(`${server.url}/api/builds`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${server.accessKey}` }, body: line + '\n' });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(((await r.json()) as { results: { status: string }[] }).results[0]!.status).toBe('stored');
  };
  const ev = (timestamp: number, eventType: string, data: Record<string, unknown>) => ({ timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data });

  it('a failure message, a custom value and output lines with secrets are stored redacted; task events are stored as sent', async () => {
    const id = newBuildId();
    await post(
      JSON.stringify({
        buildId: id,
        toolType: 'native',
        toolVersion: '8.0',
        agentVersion: 'third-party',
        events: [
          ev(1, 'BuildStarted', {}),
          ev(1, 'UserNamedValue', { key: 'Git repository', value: 'https://ci:p@ss-secret@git.example.com/acme/app.git' }),
          ev(2, 'TaskStarted', { id: 1, path: ':deploy' }),
          ev(3, 'ConsoleOutput', { lines: ['deploying with token=abc123secret', 'ok'] }),
          ev(4, 'TaskFinished', { id: 1, path: ':deploy', outcome: 'failed', cacheable: false }),
          ev(5, 'BuildFinished', { outcome: 'failed', failures: [{ classification: 'non-verification', message: 'Task :deploy failed: curl -u admin:hunter2 https://example.com exited with 22' }] }),
        ],
      }),
    );
    const events = await server.events(id);
    const text = JSON.stringify(events);
    for (const secret of ['hunter2', 'p@ss-secret', 'ss-secret', 'abc123secret']) expect(text).not.toContain(secret);
    expect(events.find((e) => e.eventType === 'BuildFinished')!.data).toEqual({
      outcome: 'failed',
      failures: [{ classification: 'non-verification', message: 'Task :deploy failed: curl -u admin:*** https://example.com exited with 22' }],
    });
    expect(events.find((e) => e.eventType === 'UserNamedValue')!.data).toEqual({ key: 'Git repository', value: 'https://***@git.example.com/acme/app.git' });
    expect(events.find((e) => e.eventType === 'ConsoleOutput')!.data).toEqual({ lines: ['deploying with token=***', 'ok'] });
    expect(events.find((e) => e.eventType === 'TaskFinished')!.data).toEqual({ id: 1, path: ':deploy', outcome: 'failed', cacheable: false });
  }, 60_000);

  it('a Bazel invocation: secrets in --build_metadata and in an aborted event are not stored', async () => {
    const stream: TimedBepEvent[] = [
      { event: { id: { started: {} }, started: { uuid: '12345678-bbbb-4ccc-8ddd-eeeeeeeeeeee', startTimeMillis: '1000', command: 'build', workspaceDirectory: '/src/app' } } },
      { event: { id: { buildMetadata: {} }, buildMetadata: { metadata: { REPO_URL: 'https://x-access-token:ghs_abcdefghijklmnopqrstuvwxyz0123456789@github.com/acme/app', DEPLOY: 'password=hunter2' } } } },
      { event: { id: { unconfiguredLabel: { label: '//x:y' } }, aborted: { reason: 'LOADING_FAILURE', description: 'fetching https://ci:hunter2@repo.example.com/x.zip failed' } } },
      { event: { id: { buildFinished: {} }, finished: { finishTimeMillis: '5000', exitCode: { name: 'BUILD_FAILURE', code: 1 } } } },
    ];
    const build = bepToBuild(stream, newBuildId());
    await post(toIngestLine(build));
    const text = JSON.stringify(await server.events(build.buildId));
    for (const secret of ['hunter2', 'ghs_abcdefghijklmnopqrstuvwxyz0123456789']) expect(text).not.toContain(secret);
    expect(text).toContain('fetching https://***@repo.example.com/x.zip failed');
    expect(text).toContain('https://***@github.com/acme/app');
  }, 60_000);

  it('redacts every string of any value, copying only what changed', () => {
    // Every string redacted, the rest as it was: a plain deep copy with redactText at the leaves.
    const reference = (v: unknown): unknown =>
      typeof v === 'string' ? redactText(v, redactionCases.listed) : Array.isArray(v) ? v.map(reference) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, reference(x)])) : v;
    const text = fc.oneof(fc.string(), fc.constantFrom(...redactionCases.cases.map((c) => c.text)));
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 })),
    }));
    fc.assert(
      fc.property(value, (v) => {
        const before = structuredClone(v);
        const out = redactStrings(v, redactionCases.listed);
        expect(out).toEqual(reference(v));
        expect(v).toEqual(before);
        // Unchanged: the same value; changed: a new one, the unchanged parts shared.
        if (JSON.stringify(out) === JSON.stringify(v)) expect(out).toBe(v);
        else expect(out).not.toBe(v);
      }),
      { numRuns: 300 },
    );
  });

  it('answers a short text it saw before as it did the first time (the texts seen lately without a secret)', () => {
    // A listed value that never occurs takes the path without the memo: the reference.
    const direct = (t: string) => redactText(t, ['\u0000never listed']);
    const text = fc.oneof(fc.string({ maxLength: 250 }), fc.constantFrom(...redactionCases.cases.map((c) => c.text), ...redactionCases.cases.map((c) => c.redacted)));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 20 }), (texts) => {
        for (const t of [...texts, ...texts]) expect(redactText(t)).toBe(direct(t));
      }),
      { numRuns: 300 },
    );
    // More clean texts than are kept, then the table's again: the same answers after they were dropped.
    for (let i = 0; i < 12_000; i++) redactText(`acme.module${i}.FeatureTest`);
    for (const c of redactionCases.cases) expect(redactText(c.text)).toBe(direct(c.text));
  });

  it('keeps a member named __proto__ where it was, redacted (a copy made by assignment lost it)', () => {
    const out = redactStrings(JSON.parse('{"__proto__": "password=hunter2secret", "a": 1}') as object);
    expect(JSON.stringify(out)).toBe('{"__proto__":"password=***","a":1}');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('leaves the events of a build without secrets as they are (the same array)', () => {
    const events = [ev(1, 'BuildStarted', {}), ev(2, 'BuildFinished', { outcome: 'failed', failures: [{ classification: 'verification', message: 'Test :a failed' }] })];
    expect(redactIngestEvents(events)).toBe(events);
  });
});
