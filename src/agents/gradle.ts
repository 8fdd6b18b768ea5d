// The Gradle agent: an init script (agents/gradle/buildscope.gradle), given the server it was
// made for and the agent version. The script itself reads the access key at build time; no secret
// is ever written into it.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { withSharedData } from './agent-sources.js';
import { agentResource, agentVersion } from './resources.js';

export interface InitScriptOptions {
  /** The server the script falls back to when neither BUILDSCOPE_SERVER nor agent.properties names one. */
  readonly server?: string | undefined;
}

export function gradleInitScript(options: InitScriptOptions = {}): string {
  const template = readFileSync(agentResource('gradle', 'buildscope.gradle'), 'utf8');
  const server = options.server?.replace(/\/+$/, '');
  if (server !== undefined && !/^https?:\/\/[^\s'"\\$]+$/.test(server)) {
    throw new Error(`--server needs an http:// or https:// URL, got '${options.server}'`);
  }
  return withSharedData(template.replaceAll('@AGENT_VERSION@', agentVersion()).replaceAll('@DEFAULT_SERVER@', server ?? '@DEFAULT_SERVER@'), 'groovy');
}

/** ~/.gradle/init.d (or $GRADLE_USER_HOME/init.d): where Gradle picks init scripts up by itself. */
export function gradleInitDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env['GRADLE_USER_HOME'] || join(homedir(), '.gradle'), 'init.d');
}

export function installGradleInitScript(script: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = gradleInitDir(env);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'buildscope.gradle');
  writeFileSync(file, script);
  return file;
}
