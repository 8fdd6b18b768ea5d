// The settings every agent reads, in the order of agents/agent-contract.json (system property,
// then environment variable, then `agent.properties` in the agent directory; only the JVM agents
// have system properties): server, access key, spool directory, the values to redact (the access
// key is always one), and the config file's other keys for the tags and values of contract.ts.
// The agent dir is BUILDSCOPE_AGENT_DIR, else ~/.buildscope; its config file is agent.properties
// (Java properties: the Gradle and Maven agents read it with java.util.Properties).
// docs/send-your-builds.md states the order for users.

import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { getProperties } from 'properties-file';
import { agentContext, agentContract, type AgentContext, type SettingSources } from './contract.js';

export interface AgentSettings {
  readonly dir: string;
  readonly configFile: string;
  /** Without trailing slash. */
  readonly server: string | undefined;
  readonly accessKey: string | undefined;
  readonly spoolDir: string;
  /** Literal values to remove from everything the agent sends (the access key is always one). */
  readonly redactValues: readonly string[];
  /** Every key of the config file (tags, value.*, redact, ...), for agents that need more. */
  readonly config: Readonly<Record<string, string>>;
  /** Where the settings came from (no system properties in Node), for the tags and values. */
  readonly sources: SettingSources;
  /** What the contract makes of them: redaction words, tags, values, CI. */
  readonly context: AgentContext;
  /** Something to tell the user without stopping: the config file, which holds a key, is readable by others. */
  readonly warning?: string;
}

export class AgentSettingsError extends Error {}

const nonEmpty = (...values: (string | undefined)[]): string | undefined => values.map((v) => v?.trim()).find((v) => v !== undefined && v !== '');

type Env = Readonly<Record<string, string | undefined>>;

export function agentDir(env: Env = process.env): string {
  return nonEmpty(env[agentContract().settings.agentDir.environment]) ?? join(nonEmpty(env['HOME']) ?? homedir(), '.buildscope');
}

/**
 * The settings, never throwing: what cannot be used is left out and said in `problem` (an agent
 * inside a build spools and says so; a command refuses, readAgentSettings).
 */
export function agentSettingsOf(env: Env = process.env): AgentSettings & { readonly problem?: string } {
  const dir = agentDir(env);
  const configFile = join(dir, agentContract().settings.file);
  let config: Record<string, string> = {};
  let problem: string | undefined;
  try {
    config = getProperties(readFileSync(configFile));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') problem = `cannot read ${configFile}: ${(e as Error).message}`;
  }
  const warning = configFileWarning(configFile);
  const sources: SettingSources = { systemProperties: {}, environment: env, file: config };
  const context = agentContext(sources, dir);
  let server = context.server;
  if (server !== undefined && !/^https?:\/\/[^/]/.test(server)) {
    problem ??= `the server address must be an http:// or https:// URL, got '${server}'`;
    server = undefined;
  }
  return {
    dir,
    configFile,
    server,
    accessKey: context.accessKey,
    spoolDir: context.spoolDir,
    redactValues: context.redactValues,
    config,
    sources,
    context,
    ...(problem !== undefined ? { problem } : {}),
    ...(warning !== undefined ? { warning } : {}),
  };
}

/**
 * The one line every agent prints (and goes on) when agent.properties, which holds an access key,
 * can be read by the file's group or by others: the same words in the Gradle, Maven and pytest agents.
 */
export function configFileWarning(configFile: string): string | undefined {
  if (process.platform === 'win32') return undefined; // no POSIX modes to read
  try {
    const mode = statSync(configFile).mode & 0o777;
    if ((mode & 0o077) === 0) return undefined;
    return `Buildscope: ${configFile} can be read by other users (mode ${mode.toString(8).padStart(4, '0')}); it holds an access key: chmod 600 it`;
  } catch {
    return undefined;
  }
}

/** The settings for a command: AgentSettingsError when the file cannot be read or the server address is not a URL. */
export function readAgentSettings(env: Env = process.env): AgentSettings {
  const { problem, ...settings } = agentSettingsOf(env);
  if (problem !== undefined) throw new AgentSettingsError(problem);
  return settings;
}
