// The npm agent's reading of a lockfile (src/agents/npm/lockfile.ts): projects, configurations,
// node's resolution through nested node_modules, workspaces, the build's bound, and lockfiles it
// does not read (none sent, nothing thrown).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockfileDependencyEvents, projectsOf } from '../../src/agents/npm/lockfile.js';
import { resolvedConfigurationsOf } from '../../src/services/dependencies.js';

/** A lockfile as npm 11 writes one for a workspace root with two workspaces (shape checked against `npm install`). */
const WORKSPACES = {
  name: 'shop',
  version: '1.0.0',
  lockfileVersion: 3,
  requires: true,
  packages: {
    '': { name: 'shop', version: '1.0.0', workspaces: ['packages/*'], dependencies: { express: '^4' }, devDependencies: { '@acme/lint': '^2' } },
    'node_modules/express': { version: '4.19.2', dependencies: { 'debug': '2.6.9', 'ms': '^2' } },
    'node_modules/debug': { version: '2.6.9', dependencies: { ms: '2.0.0' } },
    // debug needs ms 2.0.0, express 2.1.3: two versions, one nested.
    'node_modules/debug/node_modules/ms': { version: '2.0.0' },
    'node_modules/ms': { version: '2.1.3' },
    'node_modules/@acme/lint': { version: '2.0.1', dev: true, optionalDependencies: { fsevents: '^2' } },
    'node_modules/fsevents': { version: '2.3.3', dev: true, optional: true },
    'node_modules/api': { resolved: 'packages/api', link: true },
    'node_modules/web-ui': { resolved: 'packages/web', link: true },
    'packages/api': { version: '0.1.0', dependencies: { ms: '^2' }, optionalDependencies: { 'left-pad': '1' } },
    'packages/api/node_modules/left-pad': { version: '1.3.0', optional: true },
    'packages/web': { name: 'web-ui', version: '0.2.0', dependencies: { api: '*' }, devDependencies: { '@acme/lint': '^2' } },
    // Not reached from any project (npm prunes these): not listed.
    'node_modules/stale': { version: '9.9.9', extraneous: true },
  },
};

describe('the npm lockfile reader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bs-lockfile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists, for the root and each workspace, what each reaches, by configuration, as node resolves it', () => {
    expect(projectsOf(WORKSPACES, 'x')).toEqual([
      {
        project: 'shop',
        configurations: { dependencies: ['debug:2.6.9', 'express:4.19.2', 'ms:2.0.0', 'ms:2.1.3'], devDependencies: ['@acme/lint:2.0.1', 'fsevents:2.3.3'], optionalDependencies: [] },
      },
      { project: 'api', configurations: { dependencies: ['ms:2.1.3'], devDependencies: [], optionalDependencies: ['left-pad:1.3.0'] } },
      // A workspace's devDependencies are its own; the workspace it uses is a project dependency, and what that one needs is reached through it.
      { project: 'web-ui', configurations: { dependencies: ['ms:2.1.3', 'project api'], devDependencies: ['@acme/lint:2.0.1', 'fsevents:2.3.3'], optionalDependencies: ['left-pad:1.3.0'] } },
    ]);
  });

  it('sends one event per project and configuration, found from a directory below the lockfile, that the comparison reads as name and version', () => {
    const root = join(dir, 'shop');
    mkdirSync(join(root, 'packages', 'web'), { recursive: true });
    writeFileSync(join(root, 'package-lock.json'), JSON.stringify(WORKSPACES));
    const events = lockfileDependencyEvents(join(root, 'packages', 'web'), 5);
    expect(events.map((e) => [e.timestamp, e.data['project'], e.data['configuration']])).toEqual([
      [5, 'shop', 'dependencies'],
      [5, 'shop', 'devDependencies'],
      [5, 'api', 'dependencies'],
      [5, 'api', 'optionalDependencies'],
      [5, 'web-ui', 'dependencies'],
      [5, 'web-ui', 'devDependencies'],
      [5, 'web-ui', 'optionalDependencies'],
    ]);
    // The last `:` ends the name: a scoped name keeps its scope, two versions of one package are one module.
    const shop = resolvedConfigurationsOf(events).filter((c) => c.project === 'shop');
    expect(shop.map((c) => c.modules)).toEqual([
      { debug: '2.6.9', express: '4.19.2', ms: '2.0.0, 2.1.3' },
      { '@acme/lint': '2.0.1', fsevents: '2.3.3' },
    ]);
    const web = resolvedConfigurationsOf(events).find((c) => c.project === 'web-ui' && c.configuration === 'dependencies')!;
    expect(web.modules).toEqual({ ms: '2.1.3', 'project api': '' });
  });

  it('lists at most the build\'s bound, the rest counted as omitted', () => {
    const root = join(dir, 'bounded');
    mkdirSync(root);
    writeFileSync(join(root, 'package-lock.json'), JSON.stringify(WORKSPACES));
    expect(lockfileDependencyEvents(root, 1, 5).map((e) => e.data)).toEqual([
      { project: 'shop', configuration: 'dependencies', dependencies: ['debug:2.6.9', 'express:4.19.2', 'ms:2.0.0', 'ms:2.1.3'] },
      { project: 'shop', configuration: 'devDependencies', dependencies: ['@acme/lint:2.0.1'], omitted: 1 },
      { project: 'api', configuration: 'dependencies', dependencies: [], omitted: 1 },
      { project: 'api', configuration: 'optionalDependencies', dependencies: [], omitted: 1 },
      { project: 'web-ui', configuration: 'dependencies', dependencies: [], omitted: 2 },
      { project: 'web-ui', configuration: 'devDependencies', dependencies: [], omitted: 2 },
      { project: 'web-ui', configuration: 'optionalDependencies', dependencies: [], omitted: 1 },
    ]);
  });

  it('sends nothing for no lockfile, a broken one, npm 6\'s v1, yarn.lock or pnpm-lock.yaml', () => {
    const cases: Record<string, [file: string, text: string] | undefined> = {
      none: undefined,
      broken: ['package-lock.json', '{"lockfileVersion": 3, "packages": {'],
      v1: ['package-lock.json', JSON.stringify({ name: 'old', lockfileVersion: 1, dependencies: { ms: { version: '2.1.3' } } })],
      yarn: ['yarn.lock', '# yarn lockfile v1\n\nms@^2:\n  version "2.1.3"\n'],
      pnpm: ['pnpm-lock.yaml', "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      ms:\n        specifier: ^2\n        version: 2.1.3\n"],
      'packages not a map': ['package-lock.json', JSON.stringify({ lockfileVersion: 3, packages: [1, 2] })],
    };
    for (const [name, lock] of Object.entries(cases)) {
      const root = join(dir, `none-${name.replace(/ /g, '-')}`);
      mkdirSync(root);
      writeFileSync(join(root, 'package.json'), '{"name":"p"}');
      if (lock !== undefined) writeFileSync(join(root, lock[0]), lock[1]);
      expect(lockfileDependencyEvents(root, 1), name).toEqual([]);
    }
  });
});
