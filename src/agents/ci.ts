// CI detection and git facts, for the agents that run in Node (the Gradle script and the Maven
// extension carry the same rules in their own language). Only the provider's name and the job
// URL leave the machine, never the variables themselves.

import { spawnSync } from 'node:child_process';

export interface CiInfo {
  readonly provider: string;
  readonly url: string | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The CI running this process, from the variables known CIs set; undefined on a developer's machine. */
export function detectCi(env: Env = process.env): CiInfo | undefined {
  const all = (...keys: string[]) => keys.every((k) => env[k]);
  if (env['GITHUB_ACTIONS'] === 'true') {
    return { provider: 'GitHub Actions', url: all('GITHUB_SERVER_URL', 'GITHUB_REPOSITORY', 'GITHUB_RUN_ID') ? `${env['GITHUB_SERVER_URL']}/${env['GITHUB_REPOSITORY']}/actions/runs/${env['GITHUB_RUN_ID']}` : undefined };
  }
  if (env['GITLAB_CI']) return { provider: 'GitLab', url: env['CI_JOB_URL'] };
  if (env['JENKINS_URL'] || env['JENKINS_HOME']) return { provider: 'Jenkins', url: env['BUILD_URL'] };
  if (env['CIRCLECI']) return { provider: 'CircleCI', url: env['CIRCLE_BUILD_URL'] };
  if (env['BUILDKITE']) return { provider: 'Buildkite', url: env['BUILDKITE_BUILD_URL'] };
  if (env['TRAVIS']) return { provider: 'Travis CI', url: env['TRAVIS_JOB_WEB_URL'] };
  if (env['TF_BUILD']) {
    return {
      provider: 'Azure Pipelines',
      url: all('SYSTEM_TEAMFOUNDATIONCOLLECTIONURI', 'SYSTEM_TEAMPROJECT', 'BUILD_BUILDID') ? `${env['SYSTEM_TEAMFOUNDATIONCOLLECTIONURI']}${env['SYSTEM_TEAMPROJECT']}/_build/results?buildId=${env['BUILD_BUILDID']}` : undefined,
    };
  }
  if (env['BITBUCKET_BUILD_NUMBER']) {
    return { provider: 'Bitbucket Pipelines', url: env['BITBUCKET_GIT_HTTP_ORIGIN'] ? `${env['BITBUCKET_GIT_HTTP_ORIGIN']}/addon/pipelines/home#!/results/${env['BITBUCKET_BUILD_NUMBER']}` : undefined };
  }
  if (env['TEAMCITY_VERSION']) return { provider: 'TeamCity', url: undefined };
  if (env['CI'] && env['CI'] !== 'false') return { provider: 'CI', url: undefined };
  return undefined;
}

function git(dir: string, ...args: string[]): string | undefined {
  const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The `Git ...` values of the common custom user data names; empty outside a git checkout. */
export function gitValues(dir: string, env: Env = process.env): { key: string; value: string }[] {
  if (git(dir, 'rev-parse', '--is-inside-work-tree') !== 'true') return [];
  const out: { key: string; value: string }[] = [];
  const origin = git(dir, 'config', '--get', 'remote.origin.url');
  if (origin) out.push({ key: 'Git repository', value: origin.replace(/:\/\/[^/@]*@/, '://') });
  const commit = git(dir, 'rev-parse', 'HEAD');
  if (commit) out.push({ key: 'Git commit id', value: commit });
  let branch = git(dir, 'rev-parse', '--abbrev-ref', 'HEAD');
  if (branch === 'HEAD') {
    branch = ['GITHUB_HEAD_REF', 'GITHUB_REF_NAME', 'CI_COMMIT_REF_NAME', 'BRANCH_NAME', 'GIT_BRANCH', 'BUILDKITE_BRANCH', 'CIRCLE_BRANCH'].map((k) => env[k]).find((v) => v);
  }
  if (branch) out.push({ key: 'Git branch', value: branch });
  const status = git(dir, 'status', '--porcelain');
  if (status !== undefined) out.push({ key: 'Git status', value: status === '' ? 'clean' : 'dirty' });
  return out;
}
