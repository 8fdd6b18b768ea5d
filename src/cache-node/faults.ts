// How the cache node's configuration faults are worded: the units and hints of its settings. The
// checking itself (ajv, positions, did-you-mean) is the shared src/config/schema-check.ts.

import { compileSchema, formatFaults, schemaFaults as faultsAgainst, type Fault, type Wording } from '../config/schema-check.js';
import { cacheNodeConfigSchema } from './schema.js';

export type { Fault };
export { formatFaults };

const validate = compileSchema(cacheNodeConfigSchema);

const WORDING: Wording = {
  units: {
    freeSpaceBufferSize: ' (MiB)',
    maxArtifactSize: ' (MiB)',
    size: ' (MiB)',
    maxEntryAgeInHours: ' (hours)',
  },
  howToFill: {
    version: 'set "version": 4',
    type: 'say which kind',
    size: 'give the total cache size in MiB',
    key: 'the node key shown by `buildscope cache-node credentials NAME` on the server',
    secret: 'the node secret shown by `buildscope cache-node credentials NAME` on the server',
    nodeAddress: 'the URI at which the server and users reach this node',
    serverAddress: 'the URI of the Buildscope server',
    level: 'one of "read", "readwrite"',
    password: 'a hashed secret from `buildscope cache-node hash-secret`',
    username: 'the username for the UI',
  },
  minProperties: 'must set at least one property; the smallest valid file is {"version": 4}',
  constNote: { version: ' (this node reads version 4 of the file format)' },
  pattern: () => 'is not a hashed secret string (43 base64 characters, "=", ":", then base64); never write a plain password here, create the value with `buildscope cache-node hash-secret`',
  format: (_segments, data) => `must be an absolute URI such as http://host:5071/, found ${typeof data === 'string' ? JSON.stringify(data.length > 60 ? `${data.slice(0, 57)}...` : data) : String(data)}`,
};

/** The schema faults of a cache node configuration (the value is not changed: its schema has no defaults). */
export function schemaFaults(value: unknown): Fault[] {
  return faultsAgainst(validate, value, WORDING);
}
