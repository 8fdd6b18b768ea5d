// A real build tool as client: Debian's gradle (4.4) with remote(HttpBuildCache) builds a tiny
// Java project twice against the node, with credentials; the second build takes its compile
// output from the cache. Skipped where gradle is not installed (see docs/cache-node.md).

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fastHash, startTestNode } from './helpers.js';

const hasGradle = spawnSync('sh', ['-c', 'command -v gradle && command -v java'], { encoding: 'utf8' }).status === 0;

function gradle(project: string, home: string, args: readonly string[] = ['--build-cache', '--console=plain', 'compileJava']): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // Asynchronous: the node under test runs in this process and must keep serving. A daemon of
    // this test's own Gradle home serves both builds (the second starts no JVM) and is stopped
    // at the end.
    const child = spawn('gradle', args, {
      cwd: project,
      env: { ...process.env, GRADLE_USER_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe.skipIf(!hasGradle)('gradle as a build cache client', () => {
  it('stores task outputs on the first build and takes them from the cache on the second', async () => {
    const t = await startTestNode({
      version: 4,
      cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-secret') } } } },
    });
    const dir = mkdtempSync(join(tmpdir(), 'cache-node-gradle-'));
    try {
      const project = join(dir, 'project');
      mkdirSync(join(project, 'src/main/java/demo'), { recursive: true });
      writeFileSync(
        join(project, 'settings.gradle'),
        `rootProject.name = 'tiny'
buildCache {
  local { enabled = false }
  remote(HttpBuildCache) {
    url = '${t.node.url}/cache/'
    push = true
    credentials { username = 'ci'; password = 'ci-secret' }
  }
}
`,
      );
      writeFileSync(join(project, 'build.gradle'), "apply plugin: 'java'\n");
      writeFileSync(join(project, 'src/main/java/demo/Hello.java'), 'package demo;\npublic class Hello { public static void main(String[] a) { System.out.println("hi"); } }\n');

      const first = await gradle(project, join(dir, 'home'));
      expect(first.code, first.out).toBe(0);
      expect(first.out).not.toContain('FROM-CACHE');
      expect(t.node.status().writes).toBeGreaterThanOrEqual(1);

      rmSync(join(project, 'build'), { recursive: true, force: true });
      const second = await gradle(project, join(dir, 'home'));
      expect(second.code, second.out).toBe(0);
      expect(second.out).toMatch(/:compileJava FROM-CACHE/);
      expect(t.node.status().hits).toBeGreaterThanOrEqual(1);
    } finally {
      await gradle(dir, join(dir, 'home'), ['--stop']);
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);
});
