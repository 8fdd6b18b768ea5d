// Example queries, the ones the search semantics document promises to behave as written.

export interface Example {
  readonly query: string;
  readonly description: string;
}

export const EXAMPLES: readonly Example[] = [
  { query: 'buildOutcome:failed buildStartTime>-7d', description: 'Failed builds of the last 7 days' },
  { query: 'project:my-app (tag:CI or tag:nightly) -user:bot', description: 'Implicit and, or, negation' },
  { query: 'value:"CI Provider=GitHub*"', description: 'Key-value with a wildcard' },
  { query: 'requested:*test*', description: 'Infix wildcard on a multi-valued field' },
  { query: 'buildDuration:[1m to 5m30s]', description: 'Inclusive duration range' },
  { query: 'buildStartTime:2024-03-01', description: 'The whole day, UTC' },
  { query: 'buildStartTime:[2024-03-01T08:00+02:00 to 2024-03-02]', description: 'Offset on one bound' },
  { query: 'native.environment.jvmMaxMemoryHeapSize>=2gib', description: 'Storage size' },
  { query: 'jvmbuild.buildOptions.offlineModeEnabled', description: 'Bare boolean: true' },
  { query: '!native.buildCache.remote.enabled', description: 'Native builds whose remote cache is not known-true' },
  { query: '!native.configurationCache.outcome:*', description: 'Native builds without a configuration cache outcome' },
];
