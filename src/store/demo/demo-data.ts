// Realistic demo builds of all six tools as NDJSON ingest lines, deterministic per seed. Every
// catalog field is populated: the flag and environment events are generated from the catalog, so
// a field added there shows up in the demo data without touching this file.

import { fieldsOfTool, TOOL_TYPES, type FieldDef, type ToolType } from '../../query/catalog.js';
import { demoExtras, demoFailure, type DemoTestEvent } from './demo-tests.js';
import type { BuildEvent } from '../types.js';

export interface DemoOptions {
  readonly builds: number;
  readonly seed?: number;
  /** End of the time window (epoch ms); the builds start over the DEMO_WINDOW_MS before. */
  readonly now?: number;
  /** Fraction (0..1) of builds sent without BuildFinished (incomplete); 0 by default. */
  readonly unfinished?: number;
}

/** mulberry32: small, fast, good enough for demo data. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How long before `now` the demo builds' start times spread: 30 days. */
export const DEMO_WINDOW_MS = 30 * 86_400_000;

interface ToolProfile {
  readonly versions: readonly string[];
  readonly agents: readonly string[];
  readonly tasks: readonly string[];
  readonly taskPrefix: (project: string) => readonly string[];
}

const PROFILES: Readonly<Record<ToolType, ToolProfile>> = {
  native: {
    versions: ['8.10.2', '8.11.1', '8.12', '8.14.3', '9.0.0'],
    agents: ['3.19', '3.19.2', '4.0', '4.0.1'],
    tasks: ['build', 'check', 'test', 'assemble', 'clean', 'publish', ':app:bundleRelease', 'lint'],
    taskPrefix: () => [':compileJava', ':processResources', ':classes', ':jar', ':compileTestJava', ':test', ':check', ':assemble'],
  },
  jvmbuild: {
    versions: ['3.8.8', '3.9.6', '3.9.9', '4.0.0-rc-2'],
    agents: ['1.21', '1.22.1', '2.0'],
    tasks: ['clean', 'install', 'verify', 'package', 'deploy', 'test', 'site'],
    taskPrefix: () => ['maven-resources-plugin:resources', 'maven-compiler-plugin:compile', 'maven-surefire-plugin:test', 'maven-jar-plugin:jar', 'maven-install-plugin:install'],
  },
  targetbuild: {
    versions: ['6.5.0', '7.1.1', '7.4.0', '8.0.0'],
    agents: ['1.0', '1.1'],
    tasks: ['//...', '//server:all', '//client:app', '//lib/core:tests', '//tools:gen'],
    taskPrefix: () => ['//lib/core:core', '//lib/core:tests', '//server:server', '//client:app', '//tools:gen'],
  },
  scalabuild: {
    versions: ['1.9.8', '1.10.2', '1.10.7'],
    agents: ['1.0.1', '1.1.0', '1.2'],
    tasks: ['compile', 'test', 'package', 'publishLocal', 'scalafmtCheck', 'assembly'],
    taskPrefix: () => ['update', 'compile', 'Test / compile', 'test', 'packageBin'],
  },
  jsbuild: {
    versions: ['10.2.4', '10.9.0', '11.0.0'],
    agents: ['0.9.3', '1.0.0', '1.1.2'],
    tasks: ['build', 'test', 'lint', 'typecheck', 'e2e', 'storybook'],
    taskPrefix: () => ['tsc', 'eslint', 'vitest', 'vite build', 'playwright'],
  },
  pybuild: {
    versions: ['24.2', '24.3.1', '25.0'],
    agents: ['0.4.0', '0.5.2', '1.0.0'],
    tasks: ['build', 'test', 'lint', 'docs', 'wheel', 'sdist'],
    taskPrefix: () => ['ruff', 'mypy', 'pytest', 'build-wheel', 'sphinx'],
  },
};

const PROJECTS = ['payments-service', 'Checkout-Web', 'inventory', 'mobile-app', 'data-pipeline', 'auth-gateway', 'search-indexer', 'billing', 'ml-platform', 'docs-site'];
const USERS = ['alice', 'bob', 'carol', 'dmitri', 'eve', 'farah', 'guo', 'hana', 'ci', 'jenkins', 'Renée'];
const HOSTS = ['build-01.ci.example.com', 'build-02.ci.example.com', 'laptop-alice.local', 'dev-bob.corp.example.com', 'runner-7.gha.example.net', 'mac-mini-3.office.example.org'];
const TAGS = ['CI', 'LOCAL', 'nightly', 'release', 'pr', 'main', 'feature', 'dirty', 'flaky-retry'];
const BRANCHES = ['main', 'develop', 'release/2.3', 'feature/search', 'fix/npe-login', 'renovate/pg-8.x'];
const CI_PROVIDERS = ['GitHub Actions', 'Jenkins', 'GitLab CI', 'Buildkite'];
const OS = ['Linux 6.8.0-45-generic amd64', 'Mac OS X 14.6 aarch64', 'Windows 11 10.0 amd64', 'Linux 5.15.0-1064-azure amd64'];
const JAVA = ['17.0.12', '21.0.4', '11.0.24', '21.0.5'];
const LOCALES = ['en_US', 'de_DE', 'fr_FR', 'ja_JP', 'en_GB'];
const CHARSETS = ['UTF-8', 'UTF-8', 'ISO-8859-1', 'windows-1252'];
const NODE = ['v20.18.0', 'v22.11.0', 'v18.20.4'];
const VERIFICATION = ['There were failing tests. See the report at build/reports/tests/test/index.html', 'Checkstyle rule violations were found', 'lint found 3 errors', 'Assertion failed: expected 200 but was 500'];
/** The verification failures that come from failed tests (the others are lint and style checks). */
const TEST_FAILURES = [VERIFICATION[0], VERIFICATION[3]];
const NON_VERIFICATION = ['Could not resolve all dependencies for configuration compileClasspath', 'Java heap space (OutOfMemoryError)', 'Connection refused: repo.example.com:443', 'Daemon disappeared unexpectedly'];
const ALPHA = '0123456789abcdefghijklmnopqrstuvwxyz';

export function* demoBuilds(options: DemoOptions): Iterable<string> {
  const rnd = prng(options.seed ?? 1);
  const now = options.now ?? Date.now();
  const n = Math.max(0, Math.floor(options.builds));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
  const chance = (p: number): boolean => rnd() < p;

  for (let i = 0; i < n; i++) {
    const toolType = TOOL_TYPES[i % TOOL_TYPES.length]!;
    const profile = PROFILES[toolType];
    const fields = fieldsOfTool(toolType);
    let buildId = '';
    for (let k = 0; k < 13; k++) buildId += ALPHA[Math.floor(rnd() * 36)];
    // Start times spread over 30 days, in order, ending a little before `now`.
    const start = Math.round(now - DEMO_WINDOW_MS + ((i + rnd()) / Math.max(1, n)) * (DEMO_WINDOW_MS - 3_600_000));
    const project = pick(PROJECTS);
    const failed = chance(0.18);
    // Tests, console output and causes draw from a stream of their own (demo-tests.ts).
    const extra = prng(((options.seed ?? 1) * 0x9e3779b1 + i) >>> 0);
    let t = start;
    const events: BuildEvent[] = [];
    const push = (eventType: string, data: Record<string, unknown>, gap = int(1, 40)): void => {
      t += gap;
      events.push({ timestamp: t, type: { majorVersion: 1, minorVersion: 0, eventType }, data });
    };
    push('BuildStarted', {}, 0);
    push('BuildAgent', {
      username: pick(USERS),
      publicHostname: pick(HOSTS),
      localHostname: `host-${int(1, 40)}`,
      localIpAddresses: chance(0.7) ? [`10.0.${int(0, 9)}.${int(2, 250)}`] : [`192.168.1.${int(2, 250)}`, `fe80::${int(1, 9999).toString(16)}`],
    });
    push('ProjectStructure', { rootProjectName: project });
    const requested = chance(0.6) ? [pick(profile.tasks)] : [pick(profile.tasks), pick(profile.tasks)];
    push('BuildRequestedTasks', { requested, excluded: chance(0.1) ? ['test'] : [] });
    const env: Record<string, unknown> = {};
    for (const f of fields) {
      if (f.source.kind !== 'event' || f.source.eventType !== 'Environment') continue;
      env[f.source.path[0]!] = environmentValue(f, pick, int);
    }
    push('Environment', env);
    const flags = (eventType: string): Record<string, unknown> => {
      const out: Record<string, unknown> = {};
      for (const f of fields) {
        if (f.source.kind !== 'event' || f.source.eventType !== eventType) continue;
        out[f.source.path[0]!] = f.type === 'number' ? pick([1, 2, 4, 8, 12, 16]) : chance(0.5);
      }
      return out;
    };
    const options_ = flags('BuildOptions');
    if (Object.keys(options_).length > 0) push('BuildOptions', options_);
    const settings = flags('ServerSettings');
    if (Object.keys(settings).length > 0) push('ServerSettings', settings);
    if (fields.some((f) => f.source.kind === 'event' && f.source.eventType === 'BuildCache')) {
      push('BuildCache', { local: { enabled: chance(0.8) }, remote: { enabled: chance(0.6), pushEnabled: chance(0.3) }, hasError: chance(0.05) });
    }
    if (fields.some((f) => f.source.kind === 'event' && f.source.eventType === 'ConfigurationCache')) {
      push('ConfigurationCache', { outcome: pick(['hit', 'hit', 'miss', 'failed']) });
    }
    const tags = new Set([chance(0.5) ? 'CI' : 'LOCAL', pick(TAGS)]);
    for (const tag of tags) push('UserTag', { tag });
    const branch = pick(BRANCHES);
    push('UserNamedValue', { key: 'Git branch', value: branch });
    push('UserNamedValue', { key: 'Git commit id', value: hex(rnd, 12) });
    if (chance(0.5)) push('UserNamedValue', { key: 'CI provider', value: pick(CI_PROVIDERS) });
    // Tasks fill the build up to about 30 events.
    const names = profile.taskPrefix(project);
    const taskCount = Math.max(2, Math.floor((30 - events.length - 1) / 2));
    // A failed build's last task fails (the one that ran the tests or the step that broke), so
    // the build page and the trends have failing tasks to show. No extra random draws: the other
    // fields of the demo builds stay what they were.
    for (let k = 0; k < taskCount; k++) {
      const path = names[k % names.length]! + (k >= names.length ? `#${k}` : '');
      push('TaskStarted', { id: k + 1, path }, int(5, 300));
      const drawn = pick(['success', 'up-to-date', 'from-cache', 'success', 'skipped']);
      const outcome = failed && k === taskCount - 1 ? 'failed' : drawn;
      // Avoided and skipped tasks take a few milliseconds, as they do in the tools (a hundredth
      // of the drawn time: the same draws, so every other field stays what it was).
      const cacheable = drawn !== 'skipped' && chance(0.7);
      const took = int(50, 40_000);
      push('TaskFinished', { id: k + 1, path, outcome, cacheable }, outcome === 'success' || outcome === 'failed' ? took : Math.max(1, Math.round(took / 100)));
    }
    if (options.unfinished !== undefined && chance(options.unfinished)) {
      yield JSON.stringify({ buildId, toolType, toolVersion: pick(profile.versions), agentVersion: pick(profile.agents), events });
      continue;
    }
    const failures: { classification: string; message: string; cause?: Record<string, unknown> }[] = [];
    const kind = failed ? rnd() : 0;
    const verification = failed && (kind < 0.6 || kind >= 0.9);
    // The tests ran in the last task (the one that failed, in a failed build), between its start
    // and end; not in a build that failed for another reason alone (it broke before its tests).
    // Drawn here rather than below, in the same order of the main stream: a build that failed with
    // failing tests (not a lint or checkstyle failure alone) has a failed test.
    const verificationMessage = verification ? pick(VERIFICATION) : '';
    const lastTask = events.at(-1)!;
    const ran = (lastTask.data['outcome'] === 'success' || lastTask.data['outcome'] === 'failed') && (!failed || verification);
    const os = env['operatingSystem'];
    const extras = demoExtras(extra, {
      tool: toolType,
      verification,
      failedTests: TEST_FAILURES.includes(verificationMessage),
      ran,
      lastTask: String(lastTask.data['path']),
      from: events.at(-2)!.timestamp,
      to: lastTask.timestamp,
      progress: n <= 1 ? 1 : i / (n - 1),
      os: typeof os === 'string' ? os : null,
      branch,
    });
    insertTimed(events, events.length - 1, extras.tests);
    if (failed) {
      if (kind < 0.6 || kind >= 0.9) failures.push({ classification: 'verification', ...demoFailure(extra, toolType, 'verification', verificationMessage, TEST_FAILURES.includes(verificationMessage) ? extras.failed : null) });
      if (kind >= 0.6) failures.push({ classification: 'non-verification', ...demoFailure(extra, toolType, 'non-verification', pick(NON_VERIFICATION), null) });
    }
    // At the last task's end (no gap): the build's duration stays what it was.
    if (extras.console !== null) push('ConsoleOutput', { stream: 'stdout', text: extras.console }, 0);
    push('BuildFinished', { outcome: failed ? 'failed' : 'succeeded', failures }, int(100, 5000));
    yield JSON.stringify({ buildId, toolType, toolVersion: pick(profile.versions), agentVersion: pick(profile.agents), events });
  }
}

function environmentValue(f: FieldDef, pick: <T>(xs: readonly T[]) => T, int: (lo: number, hi: number) => number): unknown {
  const key = f.source.kind === 'event' ? f.source.path[0]! : '';
  switch (key) {
    case 'operatingSystem':
      return pick(OS);
    case 'numberOfCpuCores':
      return pick([2, 4, 8, 10, 16, 32, 64]);
    case 'jreVersion':
    case 'jvmVersion':
      return pick(JAVA);
    case 'jvmCharset':
      return pick(CHARSETS);
    case 'jvmLocale':
    case 'nodeLocale':
    case 'locale':
      return pick(LOCALES);
    case 'jvmMaxMemoryHeapSize':
      return pick([512, 1024, 2048, 4096, 8192]) * 1024 * 1024;
    case 'nodeVersion':
      return pick(NODE);
    default:
      return f.type === 'string' ? `value-${int(1, 9)}` : f.type === 'boolean' ? int(0, 1) === 1 : int(1, 100);
  }
}

/** `extra` (timed between the event before `at` and the one at `at`, in order) inserted before `at`. */
function insertTimed(events: BuildEvent[], at: number, extra: readonly DemoTestEvent[]): void {
  events.splice(at, 0, ...extra.map((x): BuildEvent => ({ timestamp: x.at, type: { majorVersion: 1, minorVersion: 0, eventType: x.eventType }, data: x.data })));
}

function hex(rnd: () => number, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += Math.floor(rnd() * 16).toString(16);
  return s;
}
