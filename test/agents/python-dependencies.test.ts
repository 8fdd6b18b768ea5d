// pytest's resolved dependencies end to end: Debian's pytest runs one test twice with the plugin,
// each time with another directory on PYTHONPATH holding a distribution (a `*.dist-info/METADATA`,
// which is a distribution to importlib.metadata) at another version; the comparison over HTTP
// names exactly that distribution, by its PEP 503 name.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareOver, expectSwapped, run, startAgentTestServer, type AgentTestServer } from './support.js';

const PLUGIN_DIR = resolve('src/agents/python/pylib');
const hasPytest = spawnSync('pytest-3', ['--version'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!hasPytest)('pytest dependencies from the environment', () => {
  let server: AgentTestServer;
  let dir: string;
  let project: string;
  let before = '';
  let after = '';

  /** A directory holding one distribution, `Acme_Widget.Core` at `version` (a name PEP 503 normalizes), and one that does not change. */
  const site = (version: string): string => {
    const path = join(dir, `site-${version}`);
    for (const [name, v, folder] of [['Acme_Widget.Core', version, 'acme_widget.core'], ['Steady', '3.0', 'steady']] as const) {
      mkdirSync(join(path, `${folder}-${v}.dist-info`), { recursive: true });
      writeFileSync(join(path, `${folder}-${v}.dist-info`, 'METADATA'), `Metadata-Version: 2.1\nName: ${name}\nVersion: ${v}\nSummary: a distribution: with a colon\n\nName: not a header\n`);
    }
    return path;
  };
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['CI', 'GITHUB_ACTIONS', 'GITLAB_CI', 'JENKINS_URL', 'BUILDKITE', 'CIRCLECI', 'TF_BUILD', 'TRAVIS', 'PYTHONPATH']) delete base[k];
    return { ...base, HOME: dir, PYTHONDONTWRITEBYTECODE: '1', BUILDSCOPE_SEND: 'sync', BUILDSCOPE_SERVER: server.url, BUILDSCOPE_ACCESS_KEY: server.accessKey, BUILDSCOPE_SPOOL_DIR: join(dir, 'spool'), ...extra };
  };
  const pytest = (sitePath: string) => run('pytest-3', ['-p', 'buildscope_pytest', '-p', 'no:cacheprovider', '-q', 'test_one.py'], { cwd: project, env: env({ PYTHONPATH: [PLUGIN_DIR, sitePath].join(delimiter) }) });
  const resolved = async (id: string) => (await server.events(id)).filter((e) => e.eventType === 'ResolvedDependencies').map((e) => e.data);

  beforeAll(async () => {
    server = await startAgentTestServer();
    dir = mkdtempSync(join(tmpdir(), 'bs-pytest-deps-'));
    project = join(dir, 'deps-py');
    mkdirSync(project);
    writeFileSync(join(project, 'pyproject.toml'), '[project]\nname = "deps-py"\nversion = "0.1"\n');
    writeFileSync(join(project, 'test_one.py'), 'def test_one():\n    assert True\n');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends the environment\'s distributions, PEP 503 names, sorted, once', async () => {
    const r = await pytest(site('1.0'));
    expect(r.status, r.output).toBe(0);
    before = r.stderr.trim().split('\n').at(-1)!.split('/').at(-1)!;
    const events = await resolved(before);
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual({ project: 'deps-py', configuration: 'environment', dependencies: expect.any(Array) });
    const entries = events[0]!['dependencies'] as string[];
    expect(entries).toEqual([...entries].sort());
    expect(entries).toEqual(expect.arrayContaining(['acme-widget-core:1.0', 'steady:3.0', expect.stringMatching(/^pytest:\d/)]));
    // Every entry is one normalized name and its version.
    for (const e of entries) expect(e).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*(:[^:]+)?$/);
  }, 60_000);

  it('the comparison with a run whose environment has another version of one distribution names exactly it; the other way round swaps it', async () => {
    const r = await pytest(site('1.1'));
    expect(r.status, r.output).toBe(0);
    after = r.stderr.trim().split('\n').at(-1)!.split('/').at(-1)!;
    const compare = (a: string, b: string) => compareOver((path) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.accessKey}` } }), a, b);
    const c = await compare(before, after);
    const changed = { kind: 'dependency', project: 'deps-py', configuration: 'environment', module: 'acme-widget-core', before: '1.0', after: '1.1' };
    expect(c.sections.find((s) => s.id === 'dependencies')!.differences).toEqual([changed]);
    expect(c.summary.filter((e) => e.reason === 'dependency')).toEqual([{ reason: 'dependency', difference: changed }]);
    expectSwapped(c, await compare(after, before));
  }, 60_000);

  it('lists at most the contract\'s bound, the rest counted as omitted', () => {
    const script = [
      'import json, buildscope_pytest as p',
      'p._bound = lambda name: 2 if name == "buildDependencies" else 0',
      'print(json.dumps([e["data"] for e in p._environment_dependencies("x", 0)]))',
    ].join('\n');
    const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', env: env({ PYTHONPATH: [PLUGIN_DIR, site('1.0')].join(delimiter) }) });
    expect(r.status, r.stderr).toBe(0);
    const [data] = JSON.parse(r.stdout) as { dependencies: string[]; omitted: number }[];
    expect(data!.dependencies).toHaveLength(2);
    expect(data!.omitted).toBeGreaterThan(0);
  });
});
