// The settings every agent reads, in one place and one order, whatever the tool:
//   server:     BUILDSCOPE_SERVER, else `server` in the agent's config file
//   access key: BUILDSCOPE_ACCESS_KEY, else `accessKey` in the config file
//   spool:      BUILDSCOPE_SPOOL_DIR, else `spoolDir` in the config file, else <agent dir>/spool
// The agent dir is BUILDSCOPE_AGENT_DIR, else ~/.buildscope; its config file is agent.properties
// (Java properties: the Gradle and Maven agents read it with java.util.Properties). The agents
// that run inside a build (Groovy, Java) implement the same order; docs/send-your-builds.md
// states it for users.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { getProperties } from 'properties-file';

export interface AgentSettings {
  readonly dir: string;
  readonly configFile: string;
  /** Without trailing slash. */
  readonly server: string | undefined;
  readonly accessKey: string | undefined;
  readonly spoolDir: string;
  /** Every key of the config file (tags, value.*, redact, ...), for agents that need more. */
  readonly config: Readonly<Record<string, string>>;
}

export class AgentSettingsError extends Error {}

const nonEmpty = (...values: (string | undefined)[]): string | undefined => values.map((v) => v?.trim()).find((v) => v !== undefined && v !== '');

type Env = Readonly<Record<string, string | undefined>>;

export function agentDir(env: Env = process.env): string {
  return nonEmpty(env['BUILDSCOPE_AGENT_DIR']) ?? join(nonEmpty(env['HOME']) ?? homedir(), '.buildscope');
}

/**
 * The settings, never throwing: what cannot be used is left out and said in `problem` (an agent
 * inside a build spools and says so; a command refuses, readAgentSettings).
 */
export function agentSettingsOf(env: Env = process.env): AgentSettings & { readonly problem?: string } {
  const dir = agentDir(env);
  const configFile = join(dir, 'agent.properties');
  let config: Record<string, string> = {};
  let problem: string | undefined;
  try {
    config = getProperties(readFileSync(configFile));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') problem = `cannot read ${configFile}: ${(e as Error).message}`;
  }
  let server = nonEmpty(env['BUILDSCOPE_SERVER'], config['server'])?.replace(/\/+$/, '');
  if (server !== undefined && !/^https?:\/\/[^/]/.test(server)) {
    problem ??= `the server address must be an http:// or https:// URL, got '${server}'`;
    server = undefined;
  }
  return {
    dir,
    configFile,
    server,
    accessKey: nonEmpty(env['BUILDSCOPE_ACCESS_KEY'], config['accessKey']),
    spoolDir: nonEmpty(env['BUILDSCOPE_SPOOL_DIR'], config['spoolDir']) ?? join(dir, 'spool'),
    config,
    ...(problem !== undefined ? { problem } : {}),
  };
}

/** The settings for a command: AgentSettingsError when the file cannot be read or the server address is not a URL. */
export function readAgentSettings(env: Env = process.env): AgentSettings {
  const { problem, ...settings } = agentSettingsOf(env);
  if (problem !== undefined) throw new AgentSettingsError(problem);
  return settings;
}
