// Reading Bazel's execution log (src/agents/bazel/execution-log.ts) without Bazel: concatenated
// pretty-printed objects, the key of a spawn, the contract's bounds on listed files, and what is
// not a log. test/agents/bazel-cache-miss.test.ts runs the real Bazel.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { labelOf, parseExecutionLog, spawnInputEvents, spawnKey } from '../../src/agents/bazel/execution-log.js';
import { CLI } from '../support/compiled-cli.js';
import { run } from './support.js';

/** A spawn as Bazel 4.2.3 logs it (the fields read), pretty-printed as it writes them. */
const spawn = (label: string, output: string, inputs: [string, string][], extra: Record<string, unknown> = {}) =>
  JSON.stringify(
    {
      commandArgs: ['/bin/bash', '-c', `echo "{not a brace}" > ${output}`],
      environmentVariables: [{ name: 'PATH', value: '/bin:/usr/bin' }],
      inputs: inputs.map(([path, hash]) => ({ path, digest: { hash, sizeBytes: '3', hashFunctionName: 'SHA-256' } })),
      listedOutputs: [output],
      remotable: true,
      cacheable: true,
      progressMessage: `Executing genrule ${label}`,
      mnemonic: 'Genrule',
      actualOutputs: [{ path: output, digest: { hash: 'ff', sizeBytes: '1', hashFunctionName: 'SHA-256' } }],
      runner: 'remote cache hit',
      remoteCacheHit: true,
      ...extra,
    },
    null,
    2,
  );

describe("Bazel's execution log", () => {
  it('reads concatenated pretty-printed objects, braces in strings and all', () => {
    const text = `${spawn('//a:x', 'bazel-out/k8-fastbuild/bin/a/x.txt', [['a/in.txt', 'aa']])}${spawn('//b:y', 'bazel-out/k8-fastbuild/bin/b/y.txt', [])}\n`;
    const spawns = parseExecutionLog(text);
    expect(spawns.map((s) => s['progressMessage'])).toEqual(['Executing genrule //a:x', 'Executing genrule //b:y']);
    expect(parseExecutionLog('')).toEqual([]);
    expect(() => parseExecutionLog(text.slice(0, -20))).toThrow(/cut short/);
    expect(() => parseExecutionLog('[{"a": 1}]')).toThrow(/not an execution log/);
  });

  it('keys a spawn by the label its message names, its mnemonic and first output', () => {
    expect(labelOf('Executing genrule //pkg/sub:gen')).toBe('//pkg/sub:gen');
    expect(labelOf('Testing //:greeting_test')).toBe('//:greeting_test');
    expect(labelOf('Executing genrule @repo//x:y')).toBe('@repo//x:y');
    expect(labelOf('Compiling src/main.cc')).toBeUndefined();
    const [s] = parseExecutionLog(spawn('//a:x', 'bazel-out/k8-fastbuild/bin/a/x.txt', []));
    expect(spawnKey(s!)).toBe('//a:x Genrule bazel-out/k8-fastbuild/bin/a/x.txt');
    expect(spawnKey({ ...s!, progressMessage: 'Compiling a/x.cc' })).toBe('Genrule bazel-out/k8-fastbuild/bin/a/x.txt');
    expect(spawnKey({ ...s!, listedOutputs: [], actualOutputs: [] })).toBeUndefined();
  });

  it('lists input files up to the bounds per action and per build, counting the rest; values of the environment are hashed, not sent', () => {
    const files = (n: number, p: string): [string, string][] => Array.from({ length: n }, (_, i) => [`${p}/f${i}`, `h${i}`]);
    const spawns = parseExecutionLog(spawn('//a:x', 'out/x', files(3, 'a')) + spawn('//b:y', 'out/y', files(3, 'b')));
    const events = spawnInputEvents(spawns, 7, { taskInputFiles: 2, buildInputFiles: 3 });
    expect(events.map((e) => [e.timestamp, Object.keys((e.data['files'] as Record<string, object>)['inputs']!), e.data['filesOmitted']])).toEqual([
      [7, ['a/f0', 'a/f1'], { inputs: 1 }],
      [7, ['b/f0'], { inputs: 2 }],
    ]);
    const inputs = events[0]!.data['inputs'] as Record<string, string>;
    expect(Object.keys(inputs)).toEqual(['inputs', 'command line', 'env PATH']);
    expect(JSON.stringify(events)).not.toContain('/usr/bin');
    expect(events[0]!.data).toMatchObject({ path: '//a:x Genrule out/x', target: '//a:x', mnemonic: 'Genrule', cacheKey: null, outputs: ['out/x'], remoteCacheHit: true, runner: 'remote cache hit' });
  });

  it('ingest-bep stores the build without the actions when the log is missing or not one, says so, and exits as without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bs-exec-log-'));
    try {
      writeFileSync(join(dir, 'bad.json'), '[1, 2]');
      for (const [log, why] of [[join(dir, 'missing.json'), 'no such file'], [join(dir, 'bad.json'), 'not an execution log']] as const) {
        const r = await run(process.execPath, [...CLI, 'ingest-bep', 'test/agents/fixtures/bazel/failing-test.bep.json', '--execution-log', log, '--data', join(dir, 'data')]);
        expect(r.status, r.stderr).toBe(0);
        expect(r.stderr).toBe(`buildscope ingest-bep: the execution log ${log} was not read (${why}${why === 'no such file' ? '' : ': a value that is not an object'}); the build is made without its actions' inputs\n`);
        expect(r.stdout).toMatch(/^(stored|unchanged) build [0-9a-z]{13} /);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
