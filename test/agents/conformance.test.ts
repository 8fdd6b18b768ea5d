// The conformance table (fixtures/conformance-cases.json) through all five agents: the TypeScript
// reader of the contract (npm's `buildscope run`, the spool, ingest-bep), the npm preload (whether
// it sees a CI), the pytest plugin (its functions in a python3 process), the Maven extension (its
// Contract class, one JVM start) and the Gradle init script (its BuildscopeAgent class compiled by
// Groovy outside Gradle, one JVM start). The real builds of gradle/maven/python/npm.test.ts check
// one case each end to end. Every agent also tells the spool files of builds from other files
// (SPOOL_NAMES, by the contract's build ID). Also: the docs' tables of CI providers and redaction
// words against the contract, and the git values of a checkout.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { contextEvents } from '../../src/agents/common-env.js';
import { agentContext, agentContract, newBuildId, osTag, type AgentContext } from '../../src/agents/contract.js';
import { gradleInitScript } from '../../src/agents/gradle.js';
import { SPOOL_FILE } from '../../src/agents/spool.js';
import { buildMavenExtension, mavenHome } from '../../src/agents/maven.js';
import { git, has } from './jvm-support.js';

interface Case {
  readonly name: string;
  readonly environment: Record<string, string>;
  readonly file?: Record<string, string>;
  readonly systemProperties?: Record<string, string>;
  readonly expect: Partial<Record<keyof AgentContext, unknown>>;
}

export const conformanceCases = (JSON.parse(readFileSync('test/agents/fixtures/conformance-cases.json', 'utf8')) as { cases: Case[] }).cases;
const AGENT_DIR = '/agent-dir';

/** What every agent must answer for a case: its expect with the defaults filled in. */
export function expected(c: Case): Record<string, unknown> {
  const out: Record<string, unknown> = { server: null, accessKey: null, spoolDir: join(AGENT_DIR, 'spool'), redact: [], redactValues: [], tags: ['LOCAL', '{os}'], values: [], ciBranch: null, ...c.expect };
  out['tags'] = (out['tags'] as string[]).map((t) => (t === '{os}' ? osTag() : t));
  return out;
}

/** One agent's answer in the table's shape (null for absent, pairs as arrays). */
function normalized(answer: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['server', 'accessKey', 'spoolDir', 'redact', 'redactValues', 'tags', 'values', 'ciBranch']) out[k] = answer[k] ?? null;
  out['values'] = (out['values'] as unknown[][] | null)?.map((p) => [...p]) ?? [];
  return out;
}

/**
 * Spool file names: those of builds (the contract's build ID, then `.ndjson`), and names an agent
 * must leave alone. Every agent takes exactly those that SPOOL_FILE takes (which
 * test/store/build-id.test.ts holds to the contract).
 */
const SPOOL_NAMES: readonly string[] = (() => {
  const { alphabet, length } = agentContract().buildId;
  const id = (c: string) => c.repeat(length);
  return [
    ...[...alphabet].map((c) => `${id(c)}.ndjson`),
    `${alphabet.slice(0, length)}.ndjson`,
    `${id('A')}.ndjson`,
    `${id('0').slice(1)}.ndjson`,
    `${id('0')}0.ndjson`,
    `-${id('0').slice(1)}.ndjson`,
    `${id('0')}.json`,
    `${id('0')}.ndjson.tmp`,
    `${id('0')}.ndjson.sending.other`,
    '.ndjson',
    `${id('é')}.ndjson`,
  ];
})();

/** The agent's answers for SPOOL_NAMES (after its cases' answers), against SPOOL_FILE. */
function expectSpoolNames(answers: readonly Record<string, unknown>[]): void {
  expect(SPOOL_NAMES.filter((n) => SPOOL_FILE.test(n)).length).toBeGreaterThan(10);
  expect(answers.map((a, i) => [SPOOL_NAMES[i], a['spooledBuild']])).toEqual(SPOOL_NAMES.map((n) => [n, SPOOL_FILE.test(n)]));
}

/** Every agent's answers, case by case, with the case's name in the failure message. */
function expectConformance(cases: readonly Case[], answers: readonly Record<string, unknown>[]): void {
  expect(answers).toHaveLength(cases.length);
  cases.forEach((c, i) => expect(normalized(answers[i]!), c.name).toEqual(expected(c)));
}

const withoutSystemProperties = conformanceCases.filter((c) => c.systemProperties === undefined);

/** The lines the JVM harnesses read: `source <TAB> base64 key <TAB> base64 value`, `end <TAB> base64 agent dir`, then `spool <TAB> base64 file name` for SPOOL_NAMES. */
function harnessInput(cases: readonly Case[]): string {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const spool = SPOOL_NAMES.map((n) => `spool\t${b64(n)}\n`).join('');
  return cases
    .map((c) => {
      const lines: string[] = [];
      for (const [source, entries] of [['systemProperty', c.systemProperties], ['environment', c.environment], ['file', c.file]] as const) {
        for (const [k, v] of Object.entries(entries ?? {})) lines.push(`${source}\t${b64(k)}\t${b64(v)}\n`);
      }
      return `${lines.join('')}end\t${b64(AGENT_DIR)}\n`;
    })
    .join('')
    .concat(spool);
}

/** Runs a harness process with input on stdin; its standard output. */
function harness(command: string, args: readonly string[], input: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(out) : fail(new Error(`${command} exited with ${code}: ${err.slice(0, 2000)}`))));
    child.stdin.end(input);
  });
}

const jsonLines = (out: string) => out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the conformance table', () => {
  const work = mkdtempSync(join(tmpdir(), 'bs-conformance-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('has cases for every CI provider, every redaction word and alias, and every setting source', () => {
    const c = agentContract();
    const named = new Set(conformanceCases.flatMap((k) => (k.expect.values as [string, string][] | undefined) ?? []).filter(([key]) => key === c.values.ciProvider).map(([, v]) => v));
    expect([...named].sort()).toEqual(c.ci.providers.map((p) => p.name).sort());
    const words = conformanceCases.map((k) => String(k.environment['BUILDSCOPE_REDACT'] ?? k.file?.['redact'] ?? k.systemProperties?.['buildscope.redact'] ?? '').toLowerCase());
    for (const w of c.redaction.words.flatMap((x) => [x.word, ...x.aliases]).concat(c.redaction.all)) expect(words.some((x) => x.split(/[\s,]+/).includes(w.toLowerCase())), w).toBe(true);
    expect(conformanceCases.some((k) => k.systemProperties !== undefined)).toBe(true);
    expect(conformanceCases.some((k) => k.file !== undefined)).toBe(true);
  });

  it('TypeScript: the contract reader of the npm agent, the spool and ingest-bep', () => {
    expectConformance(
      withoutSystemProperties,
      withoutSystemProperties.map((c) => agentContext({ systemProperties: {}, environment: c.environment, file: c.file ?? {} }, AGENT_DIR) as unknown as Record<string, unknown>),
    );
    for (let i = 0; i < 200; i++) expect(newBuildId()).toMatch(/^[0-9a-z]{13}$/);
  });

  it('the npm preload: CI or not, and its build IDs', () => {
    const preload = createRequire(import.meta.url)(resolve('src/agents/npm/preload.cjs')) as { onCi(env: Record<string, string>, contract: unknown): boolean; newBuildId(contract: unknown): string };
    for (const c of withoutSystemProperties) expect(preload.onCi(c.environment, agentContract()), c.name).toBe(expected(c)['tags'] !== undefined && (expected(c)['tags'] as string[])[0] === 'CI');
    for (let i = 0; i < 200; i++) expect(preload.newBuildId(agentContract())).toMatch(/^[0-9a-z]{13}$/);
  });

  it('the pytest plugin, by its own functions in python3', async () => {
    const script = [
      'import json, sys',
      'import buildscope_pytest as b',
      'cases = [c for c in json.load(open(sys.argv[1]))["cases"] if "systemProperties" not in c]',
      'names = json.loads(sys.argv[3])',
      'print(json.dumps({"answers": [b._agent_context({"environment": c["environment"], "file": c.get("file", {})}, sys.argv[2]) for c in cases], "ids": [b._new_build_id() for _ in range(200)], "spool": [{"spooledBuild": b._spooled_build(n) is not None} for n in names]}))',
    ].join('\n');
    const r = spawnSync('python3', ['-c', script, 'test/agents/fixtures/conformance-cases.json', AGENT_DIR, JSON.stringify(SPOOL_NAMES)], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: resolve('src/agents/python/pylib'), PYTHONDONTWRITEBYTECODE: '1' } });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { answers: Record<string, unknown>[]; ids: string[]; spool: Record<string, unknown>[] };
    expectConformance(withoutSystemProperties, out.answers);
    expectSpoolNames(out.spool);
    for (const id of out.ids) expect(id).toMatch(/^[0-9a-z]{13}$/);
  }, 60_000);

  it.skipIf(!has('mvn', 'javac', 'jar', 'java'))('the Maven extension, by its Contract class in one JVM', async () => {
    const { jar } = buildMavenExtension(mavenHome(), join(work, 'maven'));
    const out = jsonLines(await harness('java', ['-cp', jar, 'test/agents/fixtures/jvm/ConformanceCases.java'], harnessInput(conformanceCases)));
    expectConformance(conformanceCases, out.slice(0, conformanceCases.length));
    expectSpoolNames(out.slice(conformanceCases.length));
  }, 180_000);

  const gradleLib = '/usr/share/gradle/lib';
  it.skipIf(!has('groovy') || !readdirSafe(gradleLib).some((f) => f.startsWith('gradle-core-api')))('the Gradle init script, by its BuildscopeAgent class in one JVM', async () => {
    const script = join(work, 'buildscope.gradle');
    writeFileSync(script, gradleInitScript({}));
    const classpath = readdirSafe(gradleLib).filter((f) => f.endsWith('.jar')).map((f) => join(gradleLib, f)).join(':');
    const out = jsonLines(await harness('groovy', ['-cp', classpath, 'test/agents/fixtures/jvm/ConformanceCases.groovy', script], harnessInput(conformanceCases)));
    expectConformance(conformanceCases, out.slice(0, conformanceCases.length));
    expectSpoolNames(out.slice(conformanceCases.length));
  }, 180_000);
});

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

describe('the git values of a checkout (TypeScript)', () => {
  it('repository without user info, commit, branch (the CI\'s for a detached HEAD), clean or dirty', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-git-'));
    const valuesOf = (ciEnv: Record<string, string>) => {
      const events = contextEvents(agentContext({ systemProperties: {}, environment: ciEnv, file: {} }, dir), dir, 0);
      return {
        tags: events.filter((e) => e.type.eventType === 'UserTag').map((e) => e.data['tag']),
        values: Object.fromEntries(events.filter((e) => e.type.eventType === 'UserNamedValue').map((e) => [e.data['key'], e.data['value']])),
      };
    };
    try {
      expect(valuesOf({}).values).toEqual({});
      git(dir, 'init');
      writeFileSync(join(dir, 'a.txt'), 'a');
      git(dir, 'add', '.');
      git(dir, 'commit', '-qm', 'a');
      git(dir, 'remote', 'add', 'origin', 'https://user:token@git.example.com/acme/app.git');
      const clean = valuesOf({});
      expect(clean.values).toMatchObject({ 'Git repository': 'https://git.example.com/acme/app.git', 'Git branch': 'main', 'Git status': 'clean' });
      expect(clean.values['Git commit id']).toMatch(/^[0-9a-f]{40}$/);
      expect(clean.tags).not.toContain('Dirty');
      writeFileSync(join(dir, 'a.txt'), 'b');
      git(dir, 'checkout', '-q', '--detach');
      const dirty = valuesOf({ GITHUB_ACTIONS: 'true', GITHUB_REF_NAME: 'release' });
      expect(dirty.values).toMatchObject({ 'Git branch': 'release', 'Git status': 'dirty', 'CI provider': 'GitHub Actions' });
      expect(dirty.tags).toEqual(['CI', osTag(), 'Dirty']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('docs/send-your-builds.md and the contract', () => {
  const docs = readFileSync('docs/send-your-builds.md', 'utf8');
  /** The rows of the markdown table under a heading's first table. */
  const table = (heading: string): string[][] => {
    const from = docs.indexOf(heading);
    expect(from, heading).toBeGreaterThanOrEqual(0);
    const lines = docs.slice(from).split('\n');
    const start = lines.findIndex((l) => l.startsWith('|'));
    const rows = [];
    for (let i = start + 2; i < lines.length && lines[i]!.startsWith('|'); i++) rows.push(lines[i]!.split('|').slice(1, -1).map((c) => c.trim()));
    return rows;
  };
  const code = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

  it('the CI providers table is the contract\'s, row by row', () => {
    const rows = table('### CI providers');
    expect(rows.map((r) => r[0])).toEqual(agentContract().ci.providers.map((p) => p.name));
    agentContract().ci.providers.forEach((p, i) => {
      const [, detect, buildUrl, branch] = rows[i]!;
      expect(code(detect!), p.name).toEqual(p.detect.map((d) => (d.equals !== undefined ? `${d.variable}=${d.equals}` : d.variable)));
      expect(code(buildUrl!), p.name).toEqual([...p.buildUrl]);
      expect(code(branch!), p.name).toEqual([...p.branch]);
    });
  });

  it('the redaction words and the setting keys are the contract\'s', () => {
    const rows = table('### Redaction words');
    expect(rows.map((r) => code(r[0]!))).toEqual(agentContract().redaction.words.map((w) => [w.word, ...w.aliases]));
    const settings = table('### Settings');
    const keys = agentContract().settings.keys;
    expect(settings.map((r) => code(r[0]!)[0])).toEqual(Object.keys(keys));
    for (const r of settings) {
      const k = keys[code(r[0]!)[0] as keyof typeof keys];
      expect(code(r[1]!), r[0]).toEqual(k.systemProperty ? [k.systemProperty] : k.systemPropertyPrefix ? [`${k.systemPropertyPrefix}NAME`] : []);
      expect(code(r[2]!), r[0]).toEqual([k.environment]);
      expect(code(r[3]!), r[0]).toEqual(k.file ? [k.file] : [`${k.filePrefix}NAME`]);
    }
  });
});
