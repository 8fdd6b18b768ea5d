// What every capture agent builds: one ingest line (`{buildId, toolType, toolVersion, agentVersion,
// events}`, see docs/store.md) whose build ID the agent makes itself, so that sending it twice (a
// retry, a spool flush after a send that did arrive) is a no-op on the server.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolType } from '../query/catalog.js';
import type { BuildEvent } from '../store/types.js';

export interface AgentBuild {
  readonly buildId: string;
  readonly toolType: ToolType;
  readonly toolVersion: string;
  readonly agentVersion: string;
  readonly events: BuildEvent[];
}

/** A fresh build ID by the contract's alphabet and length (agents/agent-contract.json). */
export { newBuildId } from './contract.js';

export function event(eventType: string, data: Record<string, unknown>, timestamp: number): BuildEvent {
  return { timestamp, type: { majorVersion: 1, minorVersion: 0, eventType }, data };
}

/** The package's root directory (where package.json is), from src/ (tsx) and dist/ (compiled) alike. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json of buildscope not found');
    dir = up;
  }
}

let version: string | undefined;

/** This package's version: the agentVersion of every build the agents send. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** The build as one NDJSON line of POST /api/builds. */
export function toIngestLine(build: AgentBuild): string {
  return JSON.stringify(build);
}
