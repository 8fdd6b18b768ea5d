// GET /api/version: which server this is. Public: it reveals nothing but the release.
//
// The shape is the public REST API's (`{string, year, release, patch}`), so that clients generated
// from that API read it. Buildscope numbers its releases MAJOR.MINOR.PATCH (package.json): `year`
// carries the major number, `release` the minor, `patch` the patch; `string` is the version as
// written. `product` and `version` (the same string) are kept for earlier clients.

import type { FastifyPluginAsync } from 'fastify';
import type { FacePluginOptions } from '../context.js';
import { SERVER_VERSION } from '../openapi-info.js';

export interface VersionDocument {
  readonly string: string;
  readonly year: number;
  readonly release: number;
  readonly patch: number;
  readonly product: 'buildscope';
  readonly version: string;
}

/** `1.2.3` (with an optional pre-release or build suffix) as the public version document. */
export function versionDocument(version: string): VersionDocument {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(version);
  if (m === null) throw new Error(`The server version ${JSON.stringify(version)} is not MAJOR.MINOR[.PATCH]`);
  return { string: version, year: Number(m[1]), release: Number(m[2]), patch: Number(m[3] ?? 0), product: 'buildscope', version };
}

export const versionRoutes: FastifyPluginAsync<FacePluginOptions> = async (app) => {
  const document = versionDocument(SERVER_VERSION);
  app.get(
    '/api/version',
    {
      schema: {
        operationId: 'GetVersion',
        summary: 'Server version',
        description: 'The version of the server, in the shape of the public REST API (`year` carries the major number, `release` the minor). Needs no credentials.',
        tags: ['server'],
        security: [],
        response: {
          200: {
            type: 'object',
            properties: {
              string: { type: 'string', description: 'The complete version string, e.g. 0.1.0' },
              year: { type: 'integer', minimum: 0, description: 'Major version number' },
              release: { type: 'integer', minimum: 0, description: 'Minor version number' },
              patch: { type: 'integer', minimum: 0, description: 'Patch level' },
              product: { type: 'string', description: 'Always buildscope' },
              version: { type: 'string', description: 'The same as string (kept for earlier clients)' },
            },
            required: ['string', 'year', 'release', 'patch', 'product', 'version'],
          },
        },
      },
    },
    async () => document,
  );
};
