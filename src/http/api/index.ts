// The REST API of the server: tokens, build listing and ingest, values for completion, version,
// the searches behind the web pages (count, facets, trends, build details) and tests over time.

import type { FastifyPluginAsync } from 'fastify';
import type { FacePluginOptions } from '../context.js';
import { buildRoutes } from './builds.js';
import { buildReportRoutes } from './build-report.js';
import { compareRoutes } from './compare.js';
import { searchRoutes } from './search.js';
import { testRoutes } from './tests.js';
import { tokenRoutes } from './token.js';
import { valueRoutes } from './values.js';
import { versionRoutes } from './version.js';

export const apiRoutes: FastifyPluginAsync<FacePluginOptions> = async (app, opts) => {
  await app.register(tokenRoutes, opts);
  await app.register(versionRoutes, opts);
  await app.register(buildRoutes, opts);
  await app.register(valueRoutes, opts);
  await app.register(searchRoutes, opts);
  await app.register(buildReportRoutes, opts);
  await app.register(compareRoutes, opts);
  await app.register(testRoutes, opts);
};
