// The `bes` section: the Build Event Service (gRPC) endpoint for Bazel, off without a port. One
// descriptor of src/config/sections.ts.

import { within, type Agrees, type Fault } from './schema-check.js';
import { readSecretFile, secretFileSetting, secretPairFaults } from './secret-file.js';
import { ownSection } from './section.js';
import { portNumber } from './server.js';

const MiB = 1024 * 1024;

/** The Build Event Service (gRPC) endpoint for Bazel's `--bes_backend`, on its own port. */
export interface BesSection {
  /** Listen port (0 picks a free one), or null when the endpoint is off (the default of `serve`). */
  readonly port: number | null;
  /** Largest accepted gRPC message in bytes (default 16 MiB; gRPC's own default of 4 MiB is too small for Bazel). */
  readonly maxMessageBytes: number;
  /**
   * Largest first message of a stream whose caller is not yet known (no Authorization header: Bazel 4
   * sends its key as a keyword in the first message). Bazel's first message is a small BuildStarted.
   */
  readonly maxUnauthenticatedMessageBytes: number;
  /** What one unfinished invocation may keep on disk (its events reduced to what the build is made of). */
  readonly maxInvocationBytes: number;
  /** Unfinished invocations one user may have at a time. */
  readonly maxOpenInvocationsPerUser: number;
  /** Unfinished invocations the endpoint holds at a time, all users together. */
  readonly maxOpenInvocations: number;
  /** How long an invocation whose stream ended unfinished is kept for Bazel to resume it on a new stream. */
  readonly retryWindowSeconds: number;
  /**
   * The cache nodes whose `bytestream://` URIs the endpoint reads Bazel's test reports and logs
   * from (ByteStream.Read on their gRPC port); a URI naming any other host is never read.
   */
  readonly cacheNodes: readonly BesCacheNode[];
  /** Largest test report or log read from a cache node, in bytes (a larger one is left unread). */
  readonly testOutputMaxBytes: number;
  /** Test reports and logs read per invocation (a failed attempt's first). */
  readonly testOutputsPerInvocation: number;
  /** Time all reads of one invocation's test outputs may take together, in seconds. */
  readonly testOutputTimeoutSeconds: number;
}

/** A cache node the Build Event Service endpoint reads test outputs from. */
export interface BesCacheNode {
  /** `host:port` of the node's gRPC port, as Bazel's URIs name it (`bytestream://host:port/...`). */
  readonly address: string;
  /** A user of the node (level `read` is enough) and its password; absent: read anonymously. */
  readonly user?: string;
  /** Written in the file, or read from the file of `passwordFile` when the configuration is loaded. */
  readonly password?: string;
}

/** A cache node as the file gives it: the password inline or in a file of its own. */
export interface WrittenBesCacheNode {
  readonly address: string;
  readonly user?: string;
  readonly password?: string;
  readonly passwordFile?: string;
}

/**
 * 16 MiB: Bazel sends output in chunks of --bes_outerr_chunk_size (1 MiB by default), so its
 * events stay far below; a message being read costs twice its size in memory (grpc-js keeps its
 * parts and their concatenation), per stream.
 */
export const DEFAULT_BES_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export const besSchema = {
  description: 'The Build Event Service (gRPC) endpoint for Bazel, on its own port; off without a port.',
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    port: { ...portNumber, description: 'Listen port (0 picks a free one); absent: the endpoint is off.' },
    maxMessageBytes: { description: 'Largest accepted gRPC message in bytes.', type: 'integer', minimum: 4 * MiB, maximum: 2 ** 31 - 1, default: DEFAULT_BES_MAX_MESSAGE_BYTES },
    maxUnauthenticatedMessageBytes: {
      description: "Largest first message of a stream without an Authorization header (Bazel 4 sends its key as a keyword in it); larger ones are refused before they are read.",
      type: 'integer',
      minimum: 64 * 1024,
      maximum: 2 ** 31 - 1,
      default: MiB,
    },
    maxInvocationBytes: { description: 'Bytes one unfinished invocation may keep on disk (its events reduced to what the build is made of).', type: 'integer', minimum: MiB, maximum: 2 ** 40, default: 256 * MiB },
    maxOpenInvocationsPerUser: { description: 'Unfinished invocations one user may have at a time.', type: 'integer', minimum: 1, maximum: 100_000, default: 32 },
    maxOpenInvocations: { description: 'Unfinished invocations the endpoint holds at a time, all users together.', type: 'integer', minimum: 1, maximum: 1_000_000, default: 512 },
    retryWindowSeconds: { description: 'Seconds an invocation whose stream ended unfinished is kept for Bazel to resume it on a new stream.', type: 'integer', minimum: 1, maximum: 86_400, default: 600 },
    cacheNodes: {
      description:
        "The Buildscope cache nodes whose bytestream:// URIs (Bazel with --remote_cache=grpc://... and --bes_backend) the endpoint reads test reports and logs from, over gRPC; URIs naming any other host are never read.",
      type: 'array',
      maxItems: 64,
      default: [],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['address'],
        dependentRequired: { password: ['user'], passwordFile: ['user'] },
        properties: {
          address: {
            description: "host:port of the node's --grpc-port as Bazel's URIs name it (the address of --remote_cache, or --remote_bytestream_uri_prefix); the endpoint connects to it.",
            type: 'string',
            pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$',
          },
          user: { description: 'A user of the node (level read is enough); absent: anonymous reads.', type: 'string', minLength: 1 },
          password: { description: "The user's password, written here (prefer passwordFile: this file is read by more people than the password should be).", type: 'string', minLength: 1 },
          passwordFile: secretFileSetting("the user's password"),
        },
      },
    },
    testOutputMaxBytes: { description: 'Largest test report or log read from a cache node, in bytes; a larger one is left unread.', type: 'integer', minimum: 1024, maximum: 64 * MiB, default: 8 * MiB },
    testOutputsPerInvocation: { description: "Test reports and logs read per invocation (failed attempts' first); the rest are left unread.", type: 'integer', minimum: 0, maximum: 1000, default: 16 },
    testOutputTimeoutSeconds: { description: "Seconds all reads of one invocation's test outputs may take together; what is not read by then is left unread.", type: 'integer', minimum: 1, maximum: 300, default: 10 },
  },
} as const;

const agrees: Agrees<typeof besSchema, BesSection> = true;
void agrees;

/** The section as the file gives it: no port when the endpoint is off, passwords perhaps in files. */
export type WrittenBesSection = Omit<BesSection, 'port' | 'cacheNodes'> & { readonly port?: number | null; readonly cacheNodes: readonly WrittenBesCacheNode[] };

export const besSection = ownSection({
  name: 'bes',
  schema: besSchema,
  faults: (s: WrittenBesSection): Fault[] =>
    s.cacheNodes.flatMap((n, i) => within(['cacheNodes', i], secretPairFaults(n, 'password', [], n.user !== undefined))),
  parse: (s: WrittenBesSection): BesSection => ({
    ...s,
    port: s.port ?? null,
    cacheNodes: s.cacheNodes.map(({ passwordFile, ...n }, i) =>
      passwordFile === undefined ? n : { ...n, password: readSecretFile(passwordFile, ['bes', 'cacheNodes', i, 'passwordFile']) },
    ),
  }),
});
