// The one place a server's services are opened: the auth (one cache of authentications, one
// password gate, one set of sign-in limits for every face, the Build Event Service endpoint's
// included), the faces' settings, the metrics, the cache registry and the provenance service.
// `openServer` (src/server.ts) calls it once and hands the result to the app and the Build Event
// Service endpoint; the faces read their services from their options and never open one.

import { faceSettings, type FaceSettings } from '../config.js';
import { openAuth, type Auth } from '../auth/index.js';
import { CacheRegistry } from '../cache-registry/registry.js';
import { createServerMetrics, type ServerMetrics } from '../metrics/server-metrics.js';
import { LocalBuildSource } from '../provenance/build-source.js';
import { openProvenanceService } from '../provenance/open.js';
import { parseQuery } from '../query/index.js';
import type { AppContext, FacePlugin, ServerServices } from './context.js';
import { cacheRegistryPlugin } from './cache-registry-plugin.js';
import { provenancePlugin } from './provenance-plugin.js';

export interface OpenServicesOptions {
  /**
   * The faces that will be served. A service only one face uses is opened when that face is
   * served: the provenance service loads (on a first start, generates) its signing keys, the
   * cache registry migrates its tables.
   */
  readonly plugins: readonly FacePlugin[];
  /** The server's public address (known once it listens): the base of attestations' build links. */
  readonly publicUrl: () => string;
  /** Every face's settings, when checked already (openServer checks them before it opens the database). */
  readonly faces?: FaceSettings;
  /** The metrics, when made already (openServer makes them before the store, which counts its ingests into them). */
  readonly metrics?: ServerMetrics;
  /** The auth, when a context built by hand (a test with a clock or cache of its own) opened it. */
  readonly auth?: Auth;
}

export async function openServices(ctx: AppContext, options: OpenServicesOptions): Promise<ServerServices> {
  const faces = options.faces ?? faceSettings(ctx.config);
  const clock = ctx.clock ?? Date.now;
  const auth = options.auth ?? (await openAuth(ctx.database, ctx.config, clock));
  const cacheRegistry = options.plugins.includes(cacheRegistryPlugin)
    ? await CacheRegistry.open(ctx.database, { clock, offlineAfterMs: faces.cacheNodes.offlineAfterSeconds * 1000 })
    : undefined;
  const provenance = options.plugins.includes(provenancePlugin)
    ? openProvenanceService(faces.provenance, new LocalBuildSource(ctx.store, (text) => parseQuery(text, { now: clock() })), options.publicUrl, ctx.logger)
    : undefined;
  const metrics = options.metrics ?? createServerMetrics(ctx.database, () => ctx.store.waitingForNewBuilds());
  return { auth, faces, metrics, cacheRegistry, provenance };
}

