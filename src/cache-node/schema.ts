// The JSON Schema (draft 2020-12) of version 4 of the cache node configuration file, exactly as
// the seed describes it. The committed copy is schema/cache-node-config-v4.schema.json; a test
// keeps the two identical (`cache-node schema` prints this object).

/** Base64 alphabet character, whitespace tolerated around it. */
const B = '[A-Za-z0-9+/]\\s*';

/**
 * Hashed secret string: 43 base64 characters, `=`, `:`, then base64 text in groups of four with
 * optional standard padding; whitespace between characters is tolerated.
 */
export const HASHED_SECRET_PATTERN =
  `^\\s*(?:${B}){43}=\\s*:\\s*(?:(?:${B}){4})*(?:(?:${B}){2}=\\s*=\\s*|(?:${B}){3}=\\s*)?$`;

export const SCHEMA_ID = 'https://buildscope.dev/schema/cache-node-config-v4.schema.json';

export const cacheNodeConfigSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: SCHEMA_ID,
  title: 'Buildscope cache node configuration, version 4',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  required: ['version'],
  properties: {
    version: { description: 'Version of the file format; must be 4.', type: 'integer', const: 4 },
    cache: {
      description: 'Cache settings.',
      type: 'object',
      additionalProperties: false,
      properties: {
        accessControl: {
          description: 'Credentials restricting access to the cache.',
          type: 'object',
          additionalProperties: false,
          properties: {
            anonymousLevel: {
              description: 'Access level of anonymous users.',
              type: 'string',
              enum: ['none', 'read', 'readwrite'],
            },
            users: {
              description: 'Users and their access levels, by username.',
              type: 'object',
              additionalProperties: { $ref: '#/$defs/user' },
            },
          },
        },
        freeSpaceBufferSize: { description: 'Free space to reserve on the volume, in MiB.', type: 'integer', minimum: 0 },
        maxArtifactSize: { description: 'Largest single artifact, in MiB.', type: 'integer', minimum: 1 },
        maxEntryAgeInHours: {
          description: 'Maximum age of a cached artifact in hours; null or absent means disabled.',
          type: ['integer', 'null'],
          minimum: 1,
        },
        targetSize: {
          description: 'Total size of the cache.',
          type: 'object',
          required: ['type'],
          properties: { type: { type: 'string', enum: ['fixed', 'maxAvailable'] } },
          // if/then rather than oneOf: a fault is reported against the one branch that applies.
          allOf: [
            {
              if: { required: ['type'], properties: { type: { const: 'fixed' } } },
              then: {
                additionalProperties: false,
                required: ['size'],
                properties: {
                  type: true,
                  size: { description: 'Total cache size in MiB.', type: 'integer', minimum: 1 },
                },
              },
            },
            {
              if: { required: ['type'], properties: { type: { const: 'maxAvailable' } } },
              then: { additionalProperties: false, properties: { type: true } },
            },
          ],
        },
      },
    },
    registration: {
      description: 'Connection to the server; key and secret are read from the server.',
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['key', 'secret', 'nodeAddress', 'serverAddress'],
      properties: {
        key: { description: 'Node key.', type: 'string' },
        secret: { description: 'Node secret.', type: 'string' },
        nodeAddress: { description: 'URI of this node.', type: 'string', format: 'uri' },
        serverAddress: { description: 'URI of the server.', type: 'string', format: 'uri' },
      },
    },
    uiAccess: {
      description: 'Access to the node UI.',
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['disabled', 'open', 'secure', 'generated'] } },
      allOf: [
        {
          if: { required: ['type'], properties: { type: { enum: ['disabled', 'open', 'generated'] } } },
          then: { additionalProperties: false, properties: { type: true } },
        },
        {
          if: { required: ['type'], properties: { type: { const: 'secure' } } },
          then: {
            additionalProperties: false,
            required: ['username', 'password'],
            properties: {
              type: true,
              username: { description: 'Username for the UI.', type: 'string' },
              password: { $ref: '#/$defs/hashedSecret' },
            },
          },
        },
      ],
    },
  },
  $defs: {
    hashedSecret: {
      description: 'Hashed secret string, as printed by `buildscope cache-node hash-secret`.',
      type: 'string',
      pattern: HASHED_SECRET_PATTERN,
    },
    user: {
      type: 'object',
      additionalProperties: false,
      required: ['level', 'password'],
      properties: {
        level: { description: 'Access level of the user.', type: 'string', enum: ['read', 'readwrite'] },
        password: { $ref: '#/$defs/hashedSecret' },
        note: { description: 'Free text.', type: ['string', 'null'] },
      },
    },
  },
} as const;
