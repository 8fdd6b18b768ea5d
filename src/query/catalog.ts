// The field catalog: every searchable field of a build, in one typed table.
//
// This is the single source of truth for a field. The checker resolves names against it, completion
// offers its names, values and descriptions, the SQL compiler and the store schema read `column`
// and `multi`, ingest reads `source` to derive attributes from events, and the docs are generated
// from it. Adding a field is one entry here.

export const TOOL_TYPES = ['native', 'jvmbuild', 'targetbuild', 'scalabuild', 'jsbuild', 'pybuild'] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

/** The build tool each kind is, as people name it: for the pages and for "did you mean". */
export const TOOL_NAMES: Readonly<Record<ToolType, string>> = {
  native: 'Gradle',
  jvmbuild: 'Maven',
  targetbuild: 'Bazel',
  scalabuild: 'sbt',
  jsbuild: 'npm',
  pybuild: 'Python',
};

/** Names people type for a tool kind (lower case), beside the tools' own names. */
const TOOL_ALIASES: Readonly<Record<string, ToolType>> = {
  ...Object.fromEntries(Object.entries(TOOL_NAMES).map(([kind, name]) => [name.toLowerCase(), kind as ToolType])),
  mvn: 'jvmbuild',
  yarn: 'jsbuild',
  pnpm: 'jsbuild',
  node: 'jsbuild',
  pytest: 'pybuild',
  scala: 'scalabuild',
};

export const FIELD_TYPES = ['string', 'keyValue', 'duration', 'timestamp', 'boolean', 'number', 'storageSize'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Human names of the field types, as the search syntax documentation spells them. */
export const FIELD_TYPE_LABELS: Readonly<Record<FieldType, string>> = {
  string: 'String',
  keyValue: 'Key-value',
  duration: 'Duration',
  timestamp: 'Timestamp',
  boolean: 'Boolean',
  number: 'Number',
  storageSize: 'Storage size',
};

/** Field types whose values are ordered (comparisons and ranges are allowed). */
export const ORDERED_TYPES: ReadonlySet<FieldType> = new Set(['duration', 'timestamp', 'number', 'storageSize']);

/** Where a field's value comes from in a build's ingest record (see the event model). */
export type FieldSource =
  /** A header field of the ingest record. */
  | { readonly kind: 'header'; readonly key: 'toolType' | 'toolVersion' | 'agentVersion' }
  /**
   * The value at `path` inside `data` of events of `eventType`. Single-valued fields take the last
   * occurrence; multi-valued fields collect every occurrence, flattening arrays.
   */
  | { readonly kind: 'event'; readonly eventType: string; readonly path: readonly string[] }
  /** The timestamp of the `BuildStarted` event. */
  | { readonly kind: 'startTime' }
  /** `BuildFinished` timestamp minus `BuildStarted` timestamp. */
  | { readonly kind: 'duration' }
  /** Whether `BuildFinished.failures` lists a failure of this classification (false when none). */
  | { readonly kind: 'failure'; readonly classification: 'verification' | 'non-verification' }
  /** `UserNamedValue` events, as name=value pairs. */
  | { readonly kind: 'customValue' }
  /**
   * `suite.name` of every test a `TestFinished` says failed (any attempt), named by the
   * `TestStarted` of the same `id`: multi-valued.
   */
  | { readonly kind: 'failedTests' }
  | { readonly kind: 'flakyTests' }
  /** Whether a `TestFinished` says failed; unknown when the build sent no `TestFinished`. */
  | { readonly kind: 'testFailure' };

export interface FieldDef {
  /** Canonical name as written in queries, e.g. `native.buildOptions.daemonEnabled`. */
  readonly name: string;
  readonly type: FieldType;
  /** The tool whose builds have this field; null for the generic fields of every tool. */
  readonly tool: ToolType | null;
  /** Multi-valued: a build may have several values; a term matches when any value matches. */
  readonly multi: boolean;
  /** Closed set of allowed values (lower case), when the field has one. */
  readonly values?: readonly string[];
  /** Words people type for one of `values` (lower case), offered as "did you mean", never accepted. */
  readonly valueAliases?: Readonly<Record<string, string>>;
  /** Whether `field:null` is accepted, meaning the value is unknown. */
  readonly acceptsNull?: boolean;
  readonly description: string;
  /**
   * Searched by infix (`*abc*`) often enough to deserve a trigram index on its column (free-text
   * generic fields). Multi-valued fields are always searched through their distinct terms.
   */
  readonly infix?: boolean;
  /** Identifier of the field in the store (column or attribute key): lower case, [a-z0-9_]. */
  readonly column: string;
  readonly source: FieldSource;
}

type Spec = Omit<FieldDef, 'column' | 'multi' | 'tool'> & { multi?: boolean };

const columnOf = (name: string): string => name.replace(/\./g, '_').toLowerCase();

function def(tool: ToolType | null, spec: Spec): FieldDef {
  const name = tool === null ? spec.name : `${tool}.${spec.name}`;
  return { ...spec, name, tool, multi: spec.multi ?? false, column: columnOf(name) };
}

const ev = (eventType: string, ...path: string[]): FieldSource => ({ kind: 'event', eventType, path });

const GENERIC: readonly FieldDef[] = [
  def(null, { name: 'user', type: 'string', infix: true, description: 'Operating system account that ran the build.', source: ev('BuildAgent', 'username') }),
  def(null, { name: 'hostname', type: 'string', infix: true, description: 'Public hostname of the build machine.', source: ev('BuildAgent', 'publicHostname') }),
  def(null, { name: 'project', type: 'string', infix: true, description: 'Root project, top-level module or workspace name.', source: ev('ProjectStructure', 'rootProjectName') }),
  def(null, { name: 'requested', type: 'string', multi: true, description: 'Tasks, goals, targets or commands requested.', source: ev('BuildRequestedTasks', 'requested') }),
  def(null, {
    name: 'buildTool',
    type: 'string',
    values: TOOL_TYPES,
    valueAliases: TOOL_ALIASES,
    description: `Build tool kind: ${TOOL_TYPES.map((t) => `${t} (${TOOL_NAMES[t]})`).join(', ')}.`,
    source: { kind: 'header', key: 'toolType' },
  }),
  def(null, { name: 'buildToolVersion', type: 'string', infix: true, description: 'Version of the build tool.', source: { kind: 'header', key: 'toolVersion' } }),
  def(null, { name: 'value', type: 'keyValue', multi: true, description: 'Custom value `name=value` on the build.', source: { kind: 'customValue' } }),
  def(null, { name: 'tag', type: 'string', multi: true, description: 'Tag on the build.', source: ev('UserTag', 'tag') }),
  def(null, { name: 'buildOutcome', type: 'string', values: ['succeeded', 'failed'], description: 'Outcome of the build.', source: ev('BuildFinished', 'outcome') }),
  def(null, { name: 'buildDuration', type: 'duration', description: 'Duration of the build.', source: { kind: 'duration' } }),
  def(null, { name: 'buildStartTime', type: 'timestamp', description: 'Start time of the build.', source: { kind: 'startTime' } }),
  def(null, { name: 'hasVerificationFailure', type: 'boolean', description: 'The build failed with at least one failure classified Verification.', source: { kind: 'failure', classification: 'verification' } }),
  def(null, { name: 'hasNonVerificationFailure', type: 'boolean', description: 'The build failed with at least one failure classified Non-verification.', source: { kind: 'failure', classification: 'non-verification' } }),
  def(null, {
    name: 'failedTest',
    type: 'string',
    multi: true,
    description: 'A test that failed in the build (in any attempt), as `suite.name`: `failedTest:acme.PriceTest.roundsHalfCents`, `failedTest:*PriceTest*`.',
    source: { kind: 'failedTests' },
  }),
  def(null, {
    name: 'flakyTest',
    type: 'string',
    multi: true,
    description:
      'A test that was flaky in the build: it failed, then passed on a retry (Gradle test retry, Surefire `rerunFailingTestsCount`, Bazel `--flaky_test_attempts`, pytest reruns), as `suite.name`: `flakyTest:*LoginIT*`, `flakyTest:*`.',
    source: { kind: 'flakyTests' },
  }),
  def(null, { name: 'hasFailedTest', type: 'boolean', description: 'A test failed in the build (unknown when the build sent no test events).', source: { kind: 'testFailure' } }),
];

const ENV_STRING_DESCRIPTIONS: Readonly<Record<string, string>> = {
  jreVersion: 'Java runtime version.',
  jvmCharset: 'Default character set of the JVM.',
  jvmLocale: 'Default locale of the JVM.',
  jvmVersion: 'Java virtual machine version.',
  localHostname: 'Local hostname of the build machine.',
  operatingSystem: 'Operating system of the build machine.',
  nodeVersion: 'Node.js version.',
  nodeLocale: 'Locale of the Node.js process.',
  locale: 'Locale of the build process.',
};

function envString(tool: ToolType, key: string): FieldDef {
  return def(tool, { name: `environment.${key}`, type: 'string', description: ENV_STRING_DESCRIPTIONS[key] ?? key, source: ev('Environment', key) });
}

/** The seven environment string fields shared by the JVM-based tools. */
function jvmEnvironment(tool: ToolType): FieldDef[] {
  return [
    ...['jreVersion', 'jvmCharset', 'jvmLocale', 'jvmVersion'].map((k) => envString(tool, k)),
    def(tool, { name: 'environment.localIPAddress', type: 'string', multi: true, description: 'Local IP addresses of the build machine.', source: ev('BuildAgent', 'localIpAddresses') }),
    def(tool, { name: 'environment.localHostname', type: 'string', description: ENV_STRING_DESCRIPTIONS['localHostname']!, source: ev('BuildAgent', 'localHostname') }),
    envString(tool, 'operatingSystem'),
    def(tool, { name: 'environment.jvmMaxMemoryHeapSize', type: 'storageSize', description: 'Maximum heap size of the JVM.', source: ev('Environment', 'jvmMaxMemoryHeapSize') }),
  ];
}

const cpuCores = (tool: ToolType): FieldDef =>
  def(tool, { name: 'environment.numberOfCpuCores', type: 'number', description: 'Number of CPU cores of the build machine.', source: ev('Environment', 'numberOfCpuCores') });

const agentVersionField = (tool: ToolType, name: string, description: string): FieldDef =>
  def(tool, { name, type: 'string', description, source: { kind: 'header', key: 'agentVersion' } });

const requestedField = (tool: ToolType, name: string, description: string): FieldDef =>
  def(tool, { name, type: 'string', multi: true, description, source: ev('BuildRequestedTasks', 'requested') });

const projectField = (tool: ToolType, name: string, description: string): FieldDef =>
  def(tool, { name, type: 'string', description, source: ev('ProjectStructure', 'rootProjectName') });

/** Splits `fooBarEnabled` into `foo bar enabled` for a readable default description. */
const words = (id: string): string => id.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

function flags(tool: ToolType, group: 'buildOptions' | 'serverSettings', names: readonly string[]): FieldDef[] {
  const eventType = group === 'buildOptions' ? 'BuildOptions' : 'ServerSettings';
  const what = group === 'buildOptions' ? 'Build option' : 'Server setting';
  return names.map((n) =>
    def(tool, { name: `${group}.${n}`, type: 'boolean', description: `${what}: ${words(n)}.`, source: ev(eventType, n) }),
  );
}

function buildCache(tool: ToolType): FieldDef[] {
  return [
    def(tool, { name: 'buildCache.hasError', type: 'boolean', description: 'The build cache reported an error.', source: ev('BuildCache', 'hasError') }),
    def(tool, { name: 'buildCache.local.enabled', type: 'boolean', description: 'The local build cache is enabled.', source: ev('BuildCache', 'local', 'enabled') }),
    def(tool, { name: 'buildCache.remote.enabled', type: 'boolean', description: 'The remote build cache is enabled.', source: ev('BuildCache', 'remote', 'enabled') }),
    def(tool, { name: 'buildCache.remote.pushEnabled', type: 'boolean', description: 'Pushing to the remote build cache is enabled.', source: ev('BuildCache', 'remote', 'pushEnabled') }),
  ];
}

const SERVER_SETTINGS = [
  'backgroundPublicationEnabled',
  'buildOutputCapturingEnabled',
  'fileFingerprintCapturingEnabled',
  'resourceUsageCapturingEnabled',
  'testOutputCapturingEnabled',
] as const;

const NATIVE: readonly FieldDef[] = [
  agentVersionField('native', 'pluginVersion', 'Version of the build plugin.'),
  requestedField('native', 'requestedTasks', 'Tasks requested.'),
  projectField('native', 'rootProjectName', 'Name of the root project.'),
  ...jvmEnvironment('native'),
  def('native', {
    name: 'configurationCache.outcome',
    type: 'string',
    values: ['hit', 'miss', 'failed'],
    acceptsNull: true,
    description: 'Outcome of the configuration cache (`null` when unavailable).',
    source: ev('ConfigurationCache', 'outcome'),
  }),
  def('native', { name: 'buildOptions.maxNumberOfWorkers', type: 'number', description: 'Maximum number of workers.', source: ev('BuildOptions', 'maxNumberOfWorkers') }),
  cpuCores('native'),
  ...buildCache('native'),
  ...flags('native', 'buildOptions', [
    'buildCacheEnabled',
    'configurationCacheEnabled',
    'configurationOnDemandEnabled',
    'continueOnFailureEnabled',
    'continuousBuildEnabled',
    'daemonEnabled',
    'dryRunEnabled',
    'fileSystemWatchingEnabled',
    'isolatedProjectsEnabled',
    'offlineModeEnabled',
    'parallelProjectExecution',
    'refreshDependenciesEnabled',
    'rerunTasksEnabled',
  ]),
  ...flags('native', 'serverSettings', SERVER_SETTINGS),
];

const JVMBUILD: readonly FieldDef[] = [
  agentVersionField('jvmbuild', 'extensionVersion', 'Version of the build extension.'),
  requestedField('jvmbuild', 'requestedGoals', 'Goals requested.'),
  projectField('jvmbuild', 'topLevelProjectName', 'Name of the top-level project.'),
  ...jvmEnvironment('jvmbuild'),
  def('jvmbuild', { name: 'buildOptions.maxNumberOfThreads', type: 'number', description: 'Maximum number of threads.', source: ev('BuildOptions', 'maxNumberOfThreads') }),
  cpuCores('jvmbuild'),
  ...buildCache('jvmbuild'),
  ...flags('jvmbuild', 'buildOptions', [
    'batchModeEnabled',
    'debugEnabled',
    'errorsEnabled',
    'failAtEndEnabled',
    'failFastEnabled',
    'failNeverEnabled',
    'laxChecksumsEnabled',
    'nonRecursiveEnabled',
    'noSnapshotUpdatesEnabled',
    'offlineModeEnabled',
    'quietEnabled',
    'rerunGoalsEnabled',
    'strictChecksumsEnabled',
    'updateSnapshotsEnabled',
  ]),
  ...flags('jvmbuild', 'serverSettings', ['buildCacheEnabled', ...SERVER_SETTINGS]),
];

const TARGETBUILD: readonly FieldDef[] = [requestedField('targetbuild', 'requestedTargets', 'Targets requested.')];

const SCALABUILD: readonly FieldDef[] = [
  agentVersionField('scalabuild', 'pluginVersion', 'Version of the build plugin.'),
  requestedField('scalabuild', 'requestedTasks', 'Tasks requested.'),
  projectField('scalabuild', 'rootProjectName', 'Name of the root project.'),
  ...jvmEnvironment('scalabuild'),
  cpuCores('scalabuild'),
  ...flags('scalabuild', 'buildOptions', [
    'interactiveModeEnabled',
    'offlineModeEnabled',
    'parallelExecutionEnabled',
    'semanticPluginEnabled',
    'turboEnabled',
    'useResolverEnabled',
  ]),
  ...flags('scalabuild', 'serverSettings', ['backgroundPublicationEnabled']),
];

const JSBUILD: readonly FieldDef[] = [
  agentVersionField('jsbuild', 'agentVersion', 'Version of the build agent.'),
  requestedField('jsbuild', 'requestedCommands', 'Commands requested.'),
  projectField('jsbuild', 'projectName', 'Name of the project.'),
  envString('jsbuild', 'nodeVersion'),
  envString('jsbuild', 'nodeLocale'),
  envString('jsbuild', 'operatingSystem'),
  cpuCores('jsbuild'),
];

const PYBUILD: readonly FieldDef[] = [
  agentVersionField('pybuild', 'agentVersion', 'Version of the build agent.'),
  requestedField('pybuild', 'requestedCommands', 'Commands requested.'),
  projectField('pybuild', 'projectName', 'Name of the project.'),
  envString('pybuild', 'locale'),
  envString('pybuild', 'operatingSystem'),
  cpuCores('pybuild'),
];

/** Every field, generic ones first, then each tool's in the seed's order. */
export const FIELDS: readonly FieldDef[] = [...GENERIC, ...NATIVE, ...JVMBUILD, ...TARGETBUILD, ...SCALABUILD, ...JSBUILD, ...PYBUILD];

const BY_LOWER_NAME: ReadonlyMap<string, FieldDef> = new Map(FIELDS.map((f) => [f.name.toLowerCase(), f]));

/** Looks a field up by name, case-insensitively. */
export function findField(name: string): FieldDef | undefined {
  return BY_LOWER_NAME.get(name.toLowerCase());
}

/** The fields a build of `tool` can have: the generic ones and that tool's own. */
export function fieldsOfTool(tool: ToolType): readonly FieldDef[] {
  return FIELDS.filter((f) => f.tool === null || f.tool === tool);
}

export function isToolType(s: string): s is ToolType {
  return (TOOL_TYPES as readonly string[]).includes(s);
}

/** A field that code outside the catalog names; a missing one fails when the module loads. */
function named(name: string): FieldDef {
  const f = findField(name);
  if (f === undefined) throw new Error(`The field catalog has no field ${JSON.stringify(name)}, which other modules name`);
  return f;
}

/**
 * The catalog entries that other modules read by name (the export stream's tool filter, the
 * provenance predicates, the CLI's result table, the playground). Renaming or removing one of
 * these fields fails at load time here instead of silently reading an absent attribute there.
 */
export const NAMED_FIELDS = {
  user: named('user'),
  hostname: named('hostname'),
  project: named('project'),
  requested: named('requested'),
  buildTool: named('buildTool'),
  buildToolVersion: named('buildToolVersion'),
  value: named('value'),
  tag: named('tag'),
  buildOutcome: named('buildOutcome'),
  buildDuration: named('buildDuration'),
  buildStartTime: named('buildStartTime'),
} as const;
/**
 * Whether completion offers a field's values as seen in the data (projects, users, tags, host
 * names, ...): String fields without a closed set of values.
 */
export function offersDataValues(field: FieldDef): boolean {
  return field.type === 'string' && field.values === undefined;
}
