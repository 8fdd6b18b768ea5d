// `buildscope agent <tool|flush>`: what a user types to make a build tool send its builds.
//   agent gradle [--server URL] [--install]   the Gradle init script (stdout, or ~/.gradle/init.d)
//   agent maven [--install]                   the Maven core extension, built with the user's JDK
//   agent flush                               sends the builds the agents spooled
// Each tool is one sub-command over a library function in src/agents/; more tools add theirs here.

import type { Command } from 'commander';
import { fail } from './_fail.js';

export function register(program: Command): void {
  const agent = program
    .command('agent')
    .description('Capture agents that send builds to a Buildscope server (see docs/send-your-builds.md)');

  agent
    .command('gradle')
    .description('Print the Gradle init script that sends every build (or install it into ~/.gradle/init.d)')
    .option('--server <url>', 'server the script sends to when BUILDSCOPE_SERVER and agent.properties name none')
    .option('--install', 'write the script to ~/.gradle/init.d/buildscope.gradle ($GRADLE_USER_HOME/init.d when set)')
    .action(async (opts: { server?: string; install?: boolean }) => {
      const { gradleInitScript, installGradleInitScript } = await import('../../agents/gradle.js');
      let script: string;
      try {
        script = gradleInitScript({ server: opts.server });
      } catch (e) {
        fail('agent gradle', (e as Error).message);
      }
      if (!opts.install) {
        process.stdout.write(script);
        return;
      }
      try {
        const file = installGradleInitScript(script);
        process.stderr.write(`Installed ${file}: every Gradle build of this user now sends itself to Buildscope.\n`);
      } catch (e) {
        fail('agent gradle', `cannot install the init script: ${(e as Error).message}`, 1);
      }
    });

  agent
    .command('maven')
    .description("Build the Maven core extension with this machine's JDK and Maven; print the -Dmaven.ext.class.path option that loads it (or install it into ${maven.home}/lib/ext)")
    .option('--install', 'copy the extension into ${maven.home}/lib/ext, so that every build of that Maven loads it')
    .option('--maven-home <dir>', 'the Maven installation to build for (default: the one of `mvn` on the PATH)')
    .action(async (opts: { install?: boolean; mavenHome?: string }) => {
      const { buildMavenExtension, installMavenExtension, mavenHome, MavenAgentError } = await import('../../agents/maven.js');
      const { agentDir } = await import('../../agents/settings.js');
      const { join } = await import('node:path');
      try {
        const built = buildMavenExtension(opts.mavenHome ?? mavenHome(), join(agentDir(), 'maven'));
        if (!opts.install) {
          process.stdout.write(`-Dmaven.ext.class.path=${built.jar}\n`);
          process.stderr.write(`Built ${built.jar} for the Maven in ${built.mavenHome}. Load it with MAVEN_OPTS="$(buildscope agent maven)" or pass the option above to mvn.\n`);
          return;
        }
        const target = installMavenExtension(built);
        process.stderr.write(`Installed ${target}: every build of the Maven in ${built.mavenHome} now sends itself to Buildscope.\n`);
      } catch (e) {
        if (e instanceof MavenAgentError) fail('agent maven', e.message);
        fail('agent maven', `cannot install the extension: ${(e as Error).message}`, 1);
      }
    });

  agent
    .command('flush')
    .description('Send the builds the agents kept in the spool because the server could not take them')
    .action(async () => {
      const { readAgentSettings, AgentSettingsError } = await import('../../agents/settings.js');
      const { flushSpool, spooled } = await import('../../agents/spool.js');
      let settings;
      try {
        settings = readAgentSettings();
      } catch (e) {
        if (e instanceof AgentSettingsError) fail('agent flush', e.message);
        throw e;
      }
      if (spooled(settings.spoolDir).length === 0) {
        process.stderr.write(`No spooled builds in ${settings.spoolDir}\n`);
        return;
      }
      if (settings.server === undefined) fail('agent flush', `no server configured: set BUILDSCOPE_SERVER or server= in ${settings.configFile}`);
      const r = await flushSpool(settings.spoolDir, { server: settings.server, accessKey: settings.accessKey });
      for (const id of r.sent) process.stdout.write(`${settings.server}/builds/${id}\n`);
      for (const x of r.rejected) process.stderr.write(`build ${x.buildId} rejected by the server (${x.reason}); moved to ${settings.spoolDir}/rejected\n`);
      process.stderr.write(`${r.sent.length} sent, ${r.rejected.length} rejected, ${r.kept} still spooled${r.failure ? ` (${r.failure})` : ''}\n`);
      if (r.failure !== undefined || r.rejected.length > 0) process.exitCode = 1;
    });
}
