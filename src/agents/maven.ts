// The Maven agent: a core extension (an EventSpy, agents/maven/src) compiled on the user's machine
// with the user's own JDK against the jars of the user's own Maven, so that it matches that Maven
// exactly and the package ships no binary. It is loaded either from ${maven.home}/lib/ext (install)
// or through -Dmaven.ext.class.path (MAVEN_OPTS or the command line).

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { withSharedData } from './agent-sources.js';
import { agentResource, agentVersion } from './resources.js';

export class MavenAgentError extends Error {}

const EXTENSION_CLASS = 'io.buildscope.maven.BuildscopeEventSpy';

/** A JDK tool (javac, jar): from JAVA_HOME when set, else next to the javac on the PATH. */
function jdkTool(name: string, env: NodeJS.ProcessEnv): string {
  if (env['JAVA_HOME']) {
    const t = join(env['JAVA_HOME'], 'bin', name);
    if (existsSync(t)) return t;
  }
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    const t = join(dir, name);
    if (dir && existsSync(t)) return realpathSync(t);
  }
  throw new MavenAgentError(`no '${name}' found (a JDK is needed: set JAVA_HOME or put its bin/ on the PATH)`);
}

/** ${maven.home} of the `mvn` on the PATH (what `mvn --version` reports), or of --maven-home. */
export function mavenHome(env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync('mvn', ['--version'], { encoding: 'utf8', env: { ...env, MAVEN_OPTS: '' } });
  if (r.error !== undefined || r.status !== 0) throw new MavenAgentError(`cannot run 'mvn --version'${r.error ? ` (${r.error.message})` : `: ${r.stderr.trim()}`}; pass --maven-home`);
  const m = /^Maven home: (.+)$/m.exec(r.stdout);
  if (m === null) throw new MavenAgentError("'mvn --version' did not say where Maven lives; pass --maven-home");
  return m[1]!.trim();
}

export interface BuiltExtension {
  readonly jar: string;
  readonly mavenHome: string;
}

/** Compiles the extension into <agentDir>/maven/buildscope-maven-<version>.jar (kept when already built). */
export function buildMavenExtension(home: string, outDir: string, env: NodeJS.ProcessEnv = process.env): BuiltExtension {
  const lib = join(home, 'lib');
  if (!existsSync(join(lib)) || !readdirSync(lib).some((f) => f.startsWith('maven-core'))) throw new MavenAgentError(`${home} does not look like a Maven installation (no lib/maven-core*.jar)`);
  const version = agentVersion();
  const jar = join(outDir, `buildscope-maven-${version}.jar`);
  const stamp = `${jar}.maven-home`;
  const dir = agentResource('maven', 'src', 'io', 'buildscope', 'maven');
  const files = readdirSync(dir).filter((f) => f.endsWith('.java')).sort();
  const sources = files.map((f) => withSharedData(readFileSync(join(dir, f), 'utf8').replaceAll('@AGENT_VERSION@', version), 'java'));
  // The jar is kept while the Maven and the sources it was made from (patterns included) are the same.
  const built = `${home}\n${createHash('sha256').update(sources.join('\0')).digest('hex')}`;
  if (existsSync(jar) && existsSync(stamp) && readFileSync(stamp, 'utf8') === built) return { jar, mavenHome: home };
  const work = mkdtempSync(join(tmpdir(), 'buildscope-maven-'));
  try {
    const src = join(work, 'src');
    const classes = join(work, 'classes');
    mkdirSync(src);
    mkdirSync(join(classes, 'META-INF', 'sisu'), { recursive: true });
    files.forEach((f, i) => writeFileSync(join(src, f), sources[i]!));
    const javac = spawnSync(jdkTool('javac', env), ['-nowarn', '-encoding', 'UTF-8', '--release', '8', '-d', classes, '-cp', join(lib, '*'), ...files.map((f) => join(src, f))], { encoding: 'utf8' });
    if (javac.error !== undefined || javac.status !== 0) throw new MavenAgentError(`javac failed: ${javac.error?.message ?? javac.stderr.trim()}`);
    // The sisu index: how Maven's container finds the @Named spy without scanning.
    writeFileSync(join(classes, 'META-INF', 'sisu', 'javax.inject.Named'), `${EXTENSION_CLASS}\n`);
    mkdirSync(outDir, { recursive: true, mode: 0o700 });
    const tmpJar = `${jar}.tmp`;
    const packed = spawnSync(jdkTool('jar', env), ['cf', tmpJar, '-C', classes, '.'], { encoding: 'utf8' });
    if (packed.error !== undefined || packed.status !== 0) throw new MavenAgentError(`jar failed: ${packed.error?.message ?? packed.stderr.trim()}`);
    renameSync(tmpJar, jar);
    writeFileSync(stamp, built);
    return { jar, mavenHome: home };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Copies the extension into ${maven.home}/lib/ext, where every run of that Maven loads it. */
export function installMavenExtension(built: BuiltExtension): string {
  const target = join(built.mavenHome, 'lib', 'ext', 'buildscope-maven.jar');
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(built.jar, target);
  return target;
}
