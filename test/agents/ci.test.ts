// CI detection and git facts of the Node-side agents (the same rules as the Gradle script's and
// the Maven extension's, which the end-to-end tests check through real builds).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectCi, gitValues } from '../../src/agents/ci.js';
import { git } from './jvm-support.js';

describe('detectCi', () => {
  it('names the provider and the job URL, and nothing on a developer machine', () => {
    expect(detectCi({})).toBeUndefined();
    expect(detectCi({ CI: 'false' })).toBeUndefined();
    expect(detectCi({ GITHUB_ACTIONS: 'true', GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'a/b', GITHUB_RUN_ID: '7' })).toEqual({ provider: 'GitHub Actions', url: 'https://github.com/a/b/actions/runs/7' });
    expect(detectCi({ GITHUB_ACTIONS: 'true' })).toEqual({ provider: 'GitHub Actions', url: undefined });
    expect(detectCi({ GITLAB_CI: 'true', CI_JOB_URL: 'https://gitlab.example.com/j/1' })).toEqual({ provider: 'GitLab', url: 'https://gitlab.example.com/j/1' });
    expect(detectCi({ JENKINS_URL: 'https://ci/', BUILD_URL: 'https://ci/job/1/' })).toEqual({ provider: 'Jenkins', url: 'https://ci/job/1/' });
    expect(detectCi({ TF_BUILD: 'True', SYSTEM_TEAMFOUNDATIONCOLLECTIONURI: 'https://dev.azure.com/org/', SYSTEM_TEAMPROJECT: 'p', BUILD_BUILDID: '9' })).toEqual({ provider: 'Azure Pipelines', url: 'https://dev.azure.com/org/p/_build/results?buildId=9' });
    expect(detectCi({ TEAMCITY_VERSION: '2024.1' })).toEqual({ provider: 'TeamCity', url: undefined });
    expect(detectCi({ CI: 'true' })).toEqual({ provider: 'CI', url: undefined });
  });
});

describe('gitValues', () => {
  it('reads repository (without user info), commit, branch and status of a checkout', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-git-'));
    try {
      expect(gitValues(dir)).toEqual([]);
      git(dir, 'init');
      writeFileSync(join(dir, 'a.txt'), 'a');
      git(dir, 'add', '.');
      git(dir, 'commit', '-qm', 'a');
      git(dir, 'remote', 'add', 'origin', 'https://user:token@git.example.com/acme/app.git');
      const clean = Object.fromEntries(gitValues(dir).map((v) => [v.key, v.value]));
      expect(clean).toMatchObject({ 'Git repository': 'https://git.example.com/acme/app.git', 'Git branch': 'main', 'Git status': 'clean' });
      expect(clean['Git commit id']).toMatch(/^[0-9a-f]{40}$/);
      writeFileSync(join(dir, 'a.txt'), 'b');
      git(dir, 'checkout', '-q', '--detach');
      const dirty = Object.fromEntries(gitValues(dir, { GITHUB_REF_NAME: 'release' }).map((v) => [v.key, v.value]));
      expect(dirty).toMatchObject({ 'Git branch': 'release', 'Git status': 'dirty' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
