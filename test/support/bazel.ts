// Debian's Bazel (bazel-bootstrap 4.2.3) on the offline fixture workspace of test/agents/fixtures/
// bazel (a genrule and a shell test), for the tests that run the real tool: its own HOME and output
// root in a fresh directory, so that one Bazel server serves a test file's cases and is shut down
// at its end, and the flags that keep it off the network.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { run, type RunResult } from '../agents/support.js';

export const BAZEL_FIXTURE = resolve('test/agents/fixtures/bazel');
export const hasBazel = spawnSync('bazel', ['--version'], { encoding: 'utf8' }).status === 0;

export interface BazelWorkspace {
  /** The directory of the workspace's HOME, output root and anything else of the test's. */
  readonly dir: string;
  readonly workspace: string;
  /** The flags that keep a build offline: the local JDK, stub repositories, plain output. */
  readonly offline: readonly string[];
  bazel(args: readonly string[]): Promise<RunResult>;
  /** Shuts the Bazel server down and removes the directory. */
  close(): Promise<void>;
}

export function bazelWorkspace(prefix: string): BazelWorkspace {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const workspace = join(dir, 'workspace');
  cpSync(join(BAZEL_FIXTURE, 'workspace'), workspace, { recursive: true });
  const startup = [
    '--nosystem_rc',
    '--nohome_rc',
    // What Debian's /etc/bazel/bazelrc says, without the rest of it.
    '--install_base=/usr/share/bazel',
    '--trust_install_base',
    `--output_user_root=${join(dir, 'output')}`,
    '--max_idle_secs=300',
  ];
  const bazel = (args: readonly string[]) => run('bazel', [...startup, ...args], { cwd: workspace, env: { ...process.env, HOME: dir } });
  return {
    dir,
    workspace,
    offline: [
      '--host_javabase=@local_jdk//:jdk',
      `--override_repository=rules_cc=${join(BAZEL_FIXTURE, 'stub_rules_cc')}`,
      `--override_repository=rules_java=${join(BAZEL_FIXTURE, 'stub_rules_java')}`,
      `--override_repository=remote_coverage_tools=${join(BAZEL_FIXTURE, 'stub_coverage_tools')}`,
      '--color=no',
      '--curses=no',
    ],
    bazel,
    async close() {
      await bazel(['shutdown']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
