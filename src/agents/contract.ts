// The TypeScript reader of agents/agent-contract.json: what every capture agent does alike (the
// build ID, the settings and their order, the redaction words, CI detection, the tag and value
// names). The npm agent, the spool's flush and ingest-bep use it directly; the Groovy and Java
// agents get the same file written into their sources (agent-sources.ts) and the pytest plugin
// reads it itself, each with a reader of the same few rules. The conformance table
// (test/agents/fixtures/conformance-cases.json) holds all of them to the same answers.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentResource } from './resources.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface CiProvider {
  readonly name: string;
  readonly detect: readonly { readonly variable: string; readonly equals?: string }[];
  readonly buildUrl: readonly string[];
  readonly branch: readonly string[];
}

export interface SettingKey {
  readonly systemProperty?: string;
  readonly environment?: string;
  readonly file?: string;
  readonly systemPropertyPrefix?: string;
  readonly filePrefix?: string;
}

export type SettingName = 'server' | 'accessKey' | 'spoolDir' | 'redact' | 'redactValues' | 'tags' | 'values' | 'testOutput' | 'consoleOutput' | 'taskInputs' | 'junit';
export type SettingSource = 'systemProperty' | 'environment' | 'file';

export interface AgentContract {
  readonly buildId: { readonly alphabet: string; readonly length: number };
  readonly settings: {
    readonly file: string;
    readonly agentDir: { readonly environment: string; readonly default: string };
    readonly order: readonly SettingSource[];
    readonly keys: Readonly<Record<SettingName, SettingKey>>;
    readonly switches: { readonly off: readonly string[] };
  };
  readonly bounds: { readonly consoleChars: number; readonly testOutputChars: number; readonly stackTraceChars: number; readonly messageChars: number; readonly outputTailChars: number; readonly taskInputFiles: number; readonly buildInputFiles: number; readonly buildDependencies: number };
  readonly redaction: { readonly all: string; readonly words: readonly { readonly word: string; readonly aliases: readonly string[]; readonly leavesOut: readonly string[] }[] };
  readonly tags: { readonly ci: string; readonly local: string; readonly dirty: string };
  readonly values: { readonly ciProvider: string; readonly ciBuild: string; readonly gitRepository: string; readonly gitCommitId: string; readonly gitBranch: string; readonly gitStatus: string };
  readonly gitStatus: { readonly clean: string; readonly dirty: string };
  readonly operatingSystemTags: Readonly<Record<string, string>>;
  readonly ci: { readonly providers: readonly CiProvider[]; readonly generic: { readonly detect: readonly { readonly variable: string; readonly equals?: string }[] } };
}

export const AGENT_CONTRACT_FILE = agentResource('agent-contract.json');

let contract: AgentContract | undefined;

export function agentContract(): AgentContract {
  contract ??= JSON.parse(readFileSync(AGENT_CONTRACT_FILE, 'utf8')) as AgentContract;
  return contract;
}

/** A build ID as a regular expression's source, from the contract: `[<its alphabet>]{<its length>}`. */
export function buildIdSource(): string {
  const { alphabet, length } = agentContract().buildId;
  return `[${alphabet.replace(/[\\\]^-]/g, '\\$&')}]{${length}}`;
}

/** A fresh build ID: the contract's length in its alphabet, every character equally likely (CSPRNG). */
export function newBuildId(): string {
  const { alphabet, length } = agentContract().buildId;
  // Bytes at or above the largest multiple of the alphabet's size are skipped: no character is favoured.
  const limit = 256 - (256 % alphabet.length);
  let id = '';
  while (id.length < length) {
    for (const b of randomBytes(length * 2)) if (b < limit && id.length < length) id += alphabet[b % alphabet.length];
  }
  return id;
}

/** Where a setting may come from: the JVM agents have system properties, the others none. */
export interface SettingSources {
  readonly systemProperties: Env;
  readonly environment: Env;
  readonly file: Env;
}

const trimmed = (v: string | undefined): string | undefined => {
  const t = v?.trim();
  return t === undefined || t === '' ? undefined : t;
};

/** The first source, in the contract's order, that sets the key. */
export function settingOf(name: Exclude<SettingName, 'values'>, sources: SettingSources): string | undefined {
  const key = agentContract().settings.keys[name];
  for (const source of agentContract().settings.order) {
    const k = key[source];
    const v = k === undefined ? undefined : trimmed(sourceOf(sources, source)[k]);
    if (v !== undefined) return v;
  }
  return undefined;
}

function sourceOf(sources: SettingSources, source: SettingSource): Env {
  return source === 'systemProperty' ? sources.systemProperties : source === 'environment' ? sources.environment : sources.file;
}

/** A capture switch (testOutput, consoleOutput): on unless set to one of the contract's off words. */
export const switchedOn = (value: string | undefined): boolean => value === undefined || !agentContract().settings.switches.off.includes(value.toLowerCase());

export const listOf = (text: string | undefined): string[] => (text ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');

/** The user's named values, merged key by key (the first source in the contract's order wins), sorted by key. */
export function valuesOf(sources: SettingSources): [string, string][] {
  const key = agentContract().settings.keys.values;
  const merged = new Map<string, string>();
  for (const source of [...agentContract().settings.order].reverse()) {
    const from = sourceOf(sources, source);
    if (source === 'environment') {
      for (const pair of (from[key.environment!] ?? '').split(';')) {
        const eq = pair.indexOf('=');
        if (eq > 0 && pair.slice(0, eq).trim() !== '') merged.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
      }
    } else {
      const prefix = source === 'file' ? key.filePrefix! : key.systemPropertyPrefix!;
      for (const [k, v] of Object.entries(from)) if (k.startsWith(prefix) && k.length > prefix.length && v !== undefined) merged.set(k.slice(prefix.length), v.trim());
    }
  }
  return [...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The redaction words in effect, canonical (`user`, `hostname`, `ip`), in the contract's order; aliases and any case accepted. */
export function redactedWords(sources: SettingSources): string[] {
  const { all, words } = agentContract().redaction;
  const given = new Set((settingOf('redact', sources) ?? '').toLowerCase().split(/[\s,]+/).filter(Boolean));
  return words.filter((w) => given.has(all) || [w.word, ...w.aliases].some((a) => given.has(a.toLowerCase()))).map((w) => w.word);
}

/** The BuildAgent fields the words leave out. */
export function fieldsLeftOut(words: readonly string[]): Set<string> {
  return new Set(agentContract().redaction.words.filter((w) => words.includes(w.word)).flatMap((w) => w.leavesOut));
}

export interface CiInfo {
  /** Undefined for a CI known only by `CI` being set. */
  readonly provider?: string;
  readonly buildUrl?: string;
  /** The branch the CI names, for a checkout that is a detached HEAD. */
  readonly branch?: string;
}

const isSet = (env: Env, d: { readonly variable: string; readonly equals?: string }): boolean => {
  const v = trimmed(env[d.variable]);
  return v !== undefined && (d.equals !== undefined ? v === d.equals : v.toLowerCase() !== 'false');
};

/** The CI this build runs on, from the variables the providers set; undefined on a developer's machine. */
export function detectCi(env: Env): CiInfo | undefined {
  const { providers, generic } = agentContract().ci;
  const p = providers.find((c) => c.detect.some((d) => isSet(env, d)));
  if (p === undefined) return generic.detect.some((d) => isSet(env, d)) ? {} : undefined;
  const buildUrl = p.buildUrl.map((t) => fill(t, env)).find((u) => u !== undefined);
  const branch = p.branch.map((v) => trimmed(env[v])).find((b) => b !== undefined);
  return { provider: p.name, ...(buildUrl ? { buildUrl } : {}), ...(branch ? { branch } : {}) };
}

/** `{VAR}` replaced by each variable's value; undefined when one is not set. */
function fill(template: string, env: Env): string | undefined {
  let missing = false;
  const out = template.replace(/\{([A-Z0-9_]+)\}/g, (_, name: string) => trimmed(env[name]) ?? ((missing = true), ''));
  return missing ? undefined : out;
}

/** The operating system's tag (`Linux`, `Mac OS X`, `Windows`), by Node's platform name. */
export function osTag(platform: string = process.platform): string {
  return agentContract().operatingSystemTags[platform] ?? platform;
}

/** Everything the contract decides from the settings alone: what the conformance table checks for every agent. */
export interface AgentContext {
  readonly server: string | undefined;
  readonly accessKey: string | undefined;
  readonly spoolDir: string;
  readonly redact: string[];
  readonly redactValues: string[];
  /** CI or LOCAL, the OS, then the user's tags. */
  readonly tags: string[];
  /** CI provider and build, then the user's values. */
  readonly values: [string, string][];
  readonly ciBranch: string | undefined;
}

export function agentContext(sources: SettingSources, agentDir: string): AgentContext {
  const c = agentContract();
  const accessKey = settingOf('accessKey', sources);
  const ci = detectCi(sources.environment);
  const values: [string, string][] = [];
  if (ci?.provider) values.push([c.values.ciProvider, ci.provider]);
  if (ci?.buildUrl) values.push([c.values.ciBuild, ci.buildUrl]);
  return {
    server: settingOf('server', sources)?.replace(/\/+$/, ''),
    accessKey,
    spoolDir: settingOf('spoolDir', sources) ?? join(agentDir, 'spool'),
    redact: redactedWords(sources),
    redactValues: [...listOf(settingOf('redactValues', sources)), ...(accessKey !== undefined ? [accessKey] : [])],
    tags: [ci ? c.tags.ci : c.tags.local, osTag(), ...listOf(settingOf('tags', sources))],
    values: [...values, ...valuesOf(sources)],
    ciBranch: ci?.branch,
  };
}
