// A real build tool as client: Debian's gradle (4.4) with remote(HttpBuildCache) against the node.
// Both tests share one Gradle home, so one daemon serves every build (only the first starts a
// JVM); it is stopped at the end. Skipped where gradle is not installed (see docs/cache-node.md).

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fastHash, startTestNode } from './helpers.js';

const hasGradle = spawnSync('sh', ['-c', 'command -v gradle && command -v java'], { encoding: 'utf8' }).status === 0;

function gradle(project: string, home: string, args: readonly string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // Asynchronous: the node under test runs in this process and must keep serving.
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

function settings(url: string, credentials: string): string {
  return `rootProject.name = 'tiny'
buildCache {
  local { enabled = false }
  remote(HttpBuildCache) {
    url = '${url}/cache/'
    push = true
    ${credentials}
  }
}
`;
}

/** What Gradle says when it stops using the remote cache for the rest of a build. */
const DISABLED = /remote build cache (was|is) disabled|disabled during the build/i;

describe.skipIf(!hasGradle)('gradle as a build cache client', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cache-node-gradle-'));
  const home = join(dir, 'home');
  afterAll(async () => {
    if (!hasGradle) return;
    await gradle(dir, home, ['--stop']);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores task outputs on the first build and takes them from the cache on the second', async () => {
    const t = await startTestNode({
      version: 4,
      cache: { accessControl: { anonymousLevel: 'none', users: { ci: { level: 'readwrite', password: await fastHash('ci-secret') } } } },
    });
    try {
      const project = join(dir, 'java');
      mkdirSync(join(project, 'src/main/java/demo'), { recursive: true });
      writeFileSync(join(project, 'settings.gradle'), settings(t.node.url, "credentials { username = 'ci'; password = 'ci-secret' }"));
      writeFileSync(join(project, 'build.gradle'), "apply plugin: 'java'\n");
      writeFileSync(join(project, 'src/main/java/demo/Hello.java'), 'package demo;\npublic class Hello { public static void main(String[] a) { System.out.println("hi"); } }\n');
      const args = ['--build-cache', '--console=plain', 'compileJava'];

      const first = await gradle(project, home, args);
      expect(first.code, first.out).toBe(0);
      expect(first.out).not.toContain('FROM-CACHE');
      expect(t.node.status().writes).toBeGreaterThanOrEqual(1);

      rmSync(join(project, 'build'), { recursive: true, force: true });
      const second = await gradle(project, home, args);
      expect(second.code, second.out).toBe(0);
      expect(second.out).toMatch(/:compileJava FROM-CACHE/);
      expect(t.node.status().hits).toBeGreaterThanOrEqual(1);
    } finally {
      await t.close();
    }
  }, 600_000);

  it('keeps its remote cache when one task output is over maxArtifactSize (Gradle < 7 sends no Expect and cannot take a 413)', async () => {
    const t = await startTestNode({ version: 4, cache: { maxArtifactSize: 1, accessControl: { anonymousLevel: 'readwrite' } } });
    try {
      const project = join(dir, 'oversized');
      mkdirSync(project, { recursive: true });
      writeFileSync(join(project, 'settings.gradle'), settings(t.node.url, ''));
      // Two cacheable tasks, the big one first: 2 MiB of random bytes (the entry is a gzipped tar,
      // and random bytes do not compress), then a few bytes.
      writeFileSync(
        join(project, 'build.gradle'),
        `def writer(String name, int size) {
  return tasks.create(name) {
    inputs.property('size', size)
    outputs.file("$buildDir/\${name}.bin")
    outputs.cacheIf { true }
    doLast {
      def bytes = new byte[size]
      new Random(size).nextBytes(bytes)
      def f = file("$buildDir/\${name}.bin")
      f.parentFile.mkdirs()
      f.bytes = bytes
    }
  }
}
writer('big', 2 * 1024 * 1024)
writer('small', 64)
writer('smallAfter', 128).mustRunAfter('big')
tasks.getByName('big').mustRunAfter('small')
`,
      );
      const args = ['--build-cache', '--console=plain', 'small', 'big', 'smallAfter'];

      const first = await gradle(project, home, args);
      expect(first.code, first.out).toBe(0);
      expect(first.out).not.toMatch(DISABLED);
      expect(first.out).not.toMatch(/could not store/i);
      expect(t.node.status().discardedTooLarge).toBe(1);
      expect(t.logs.lines.some((l) => l.msg.includes('discarded') && l.key !== undefined)).toBe(true);
      // Both small entries were stored, the one after the oversized entry included; the big one not.
      expect(t.node.status().writes).toBe(2);

      rmSync(join(project, 'build'), { recursive: true, force: true });
      const second = await gradle(project, home, args);
      expect(second.code, second.out).toBe(0);
      expect(second.out).toMatch(/:small FROM-CACHE/);
      expect(second.out).toMatch(/:smallAfter FROM-CACHE/);
      expect(second.out).not.toMatch(/:big FROM-CACHE/);
      expect(second.out).not.toMatch(DISABLED);
    } finally {
      await t.close();
    }
  }, 600_000);
});
