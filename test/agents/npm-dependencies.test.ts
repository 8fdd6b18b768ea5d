// npm's resolved dependencies end to end: a package whose dependencies are local tarballs (made
// with `npm pack`, installed with `npm install --offline`: nothing is downloaded) is installed
// with `npm ci` twice, once through `buildscope run` and once through the zero-touch NODE_OPTIONS
// form, its lockfile differing in one package's version between the two; the comparison over
// HTTP names exactly that package. A broken lockfile sends nothing and changes nothing.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareOver, expectSwapped, run, startAgentTestServer, type AgentTestServer } from './support.js';
import { CLI } from '../support/compiled-cli.js';

const PRELOAD = resolve('src/agents/npm/preload.cjs');

/** The app's package.json: `@acme/greet` at `version`, two packages that do not change. */
const appPackage = (version: string) => ({
  name: 'deps-app',
  version: '1.0.0',
  private: true,
  scripts: { build: 'node -e "console.log(\'built\')"' },
  dependencies: { '@acme/greet': `file:../vendor/acme-greet-${version}.tgz`, 'plain-dep': 'file:../vendor/plain-dep-2.0.0.tgz' },
  devDependencies: { 'dev-tool': 'file:../vendor/dev-tool-0.1.0.tgz' },
});

describe('npm dependencies from the lockfile', () => {
  let server: AgentTestServer;
  let dir: string;
  let app: string;
  let before = '';
  let after = '';

  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['CI', 'GITHUB_ACTIONS', 'GITLAB_CI', 'JENKINS_URL', 'BUILDKITE', 'CIRCLECI', 'TF_BUILD', 'TRAVIS', 'NODE_OPTIONS']) delete base[k];
    return {
      ...base,
      HOME: dir,
      npm_config_cache: join(dir, 'npm-cache'),
      npm_config_update_notifier: 'false',
      BUILDSCOPE_SEND: 'sync',
      BUILDSCOPE_SERVER: server.url,
      BUILDSCOPE_ACCESS_KEY: server.accessKey,
      BUILDSCOPE_SPOOL_DIR: join(dir, 'spool'),
      ...extra,
    };
  };
  const npm = (args: string[], cwd: string) => execFileSync('npm', [...args, '--offline', '--no-audit', '--no-fund'], { cwd, env: env(), stdio: 'pipe' });
  const idOf = (stderr: string): string => /\/builds\/([0-9a-z]{13})\s*$/.exec(stderr)?.[1] ?? '';
  const resolved = async (id: string) => (await server.events(id)).filter((e) => e.eventType === 'ResolvedDependencies').map((e) => e.data);

  beforeAll(async () => {
    expect(existsSync(resolve('dist/cli/main.js')), 'run node scripts/build.js first').toBe(true);
    server = await startAgentTestServer();
    dir = mkdtempSync(join(tmpdir(), 'bs-npm-deps-'));
    const vendor = join(dir, 'vendor');
    for (const [name, version] of [['@acme/greet', '1.0.0'], ['@acme/greet', '1.1.0'], ['plain-dep', '2.0.0'], ['dev-tool', '0.1.0']] as const) {
      const src = join(dir, 'src', `${name.replace('/', '-')}-${version}`);
      mkdirSync(src, { recursive: true });
      writeFileSync(join(src, 'package.json'), JSON.stringify({ name, version, main: 'index.js' }));
      writeFileSync(join(src, 'index.js'), `module.exports = ${JSON.stringify(version)};\n`);
      mkdirSync(vendor, { recursive: true });
      execFileSync('npm', ['pack', '--silent', '--pack-destination', vendor], { cwd: src, env: env(), stdio: 'pipe' });
    }
    app = join(dir, 'app');
    mkdirSync(app);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends, with npm ci through buildscope run, the lockfile\'s packages by configuration', async () => {
    writeFileSync(join(app, 'package.json'), JSON.stringify(appPackage('1.0.0'), null, 2));
    npm(['install'], app);
    const r = await run(process.execPath, [...CLI, 'run', '--', 'npm', 'ci', '--offline', '--no-audit', '--no-fund'], { cwd: app, env: env() });
    expect(r.status, r.stderr).toBe(0);
    before = idOf(r.stderr);
    expect(await resolved(before)).toEqual([
      { project: 'deps-app', configuration: 'dependencies', dependencies: ['@acme/greet:1.0.0', 'plain-dep:2.0.0'] },
      { project: 'deps-app', configuration: 'devDependencies', dependencies: ['dev-tool:0.1.0'] },
    ]);
  }, 120_000);

  it('sends them from the zero-touch form too, after the lockfile changed one version', async () => {
    writeFileSync(join(app, 'package.json'), JSON.stringify(appPackage('1.1.0'), null, 2));
    npm(['install'], app);
    const r = await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: app, env: env({ NODE_OPTIONS: `--require=${PRELOAD}` }) });
    expect(r.status, r.stderr).toBe(0);
    after = idOf(r.stderr);
    expect(after).not.toBe('');
    expect(await resolved(after)).toEqual([
      { project: 'deps-app', configuration: 'dependencies', dependencies: ['@acme/greet:1.1.0', 'plain-dep:2.0.0'] },
      { project: 'deps-app', configuration: 'devDependencies', dependencies: ['dev-tool:0.1.0'] },
    ]);
  }, 120_000);

  it('the comparison names exactly the package whose version changed, scoped name and all; the other way round swaps it', async () => {
    const compare = (a: string, b: string) => compareOver((path) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.accessKey}` } }), a, b);
    const c = await compare(before, after);
    const changed = { kind: 'dependency', project: 'deps-app', configuration: 'dependencies', module: '@acme/greet', before: '1.0.0', after: '1.1.0' };
    const section = c.sections.find((s) => s.id === 'dependencies')!;
    expect(section.differences).toEqual([changed]);
    // Compared: the three packages of the two configurations both builds resolved.
    expect(section.compared).toBe(3);
    expect(c.summary.filter((e) => e.reason === 'dependency')).toEqual([{ reason: 'dependency', difference: changed }]);
    const back = await compare(after, before);
    expect(back.sections.find((s) => s.id === 'dependencies')!.differences).toEqual([{ ...changed, before: '1.1.0', after: '1.0.0' }]);
    expectSwapped(c, back);
  }, 60_000);

  it('a broken lockfile sends nothing and changes neither the output nor the exit status', async () => {
    const broken = join(dir, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'package.json'), JSON.stringify({ name: 'broken-lock', version: '1.0.0', private: true, scripts: { build: 'node -e "console.log(\'built\')"' } }));
    writeFileSync(join(broken, 'package-lock.json'), '{"lockfileVersion": 3, "packages": {"": {');
    const plain = await run('npm', ['run', 'build'], { cwd: broken, env: env() });
    const r = await run(process.execPath, [...CLI, 'run', '--', 'npm', 'run', 'build'], { cwd: broken, env: env() });
    expect(r.status, r.stderr).toBe(plain.status);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(plain.stdout);
    // Its only line on stderr is the build's link.
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Buildscope: .*\/builds\/[0-9a-z]{13}$/)]);
    expect(await resolved(idOf(r.stderr))).toEqual([]);
  }, 60_000);
});
