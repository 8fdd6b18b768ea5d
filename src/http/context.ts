// What every part of the HTTP app receives: the context of the server (configuration, database,
// store, logger, clock) and the services the composition root opened (src/http/services.ts): the
// one auth, the faces' settings, the cache registry, the provenance service. A face never opens a
// service itself. Its own module so that the routes of src/http/api and the app that registers
// them do not import each other.

import type { FastifyPluginAsync } from 'fastify';
import type { Auth } from '../auth/index.js';
import type { FaceSettings, ServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Logger } from '../log.js';
import type { BuildStore } from '../store/types.js';
import type { CacheRegistry } from '../cache-registry/registry.js';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import type { ProvenanceService } from '../provenance/service.js';

export interface AppContext {
  readonly config: ServerConfig;
  readonly database: DatabaseHandle;
  readonly store: BuildStore;
  readonly logger: Logger;
  /**
   * Why ingest is refused right now (free disk space under retention.rejectBelowFreeDiskPercent),
   * or undefined; absent when retention does not watch the disk.
   */
  readonly refuseIngest?: () => string | undefined;
  /** Epoch-ms clock (tests move time); Date.now by default. */
  readonly clock?: () => number;
}

/** The services of a server, each opened once (openServices) and handed to every face. */
export interface ServerServices {
  /** The one auth: users, keys, tokens, and the authenticator with its cache and password gate. */
  readonly auth: Auth;
  /** Every face's typed settings, checked before the database was opened; no face parses its section. */
  readonly faces: FaceSettings;
  readonly metrics: ServerMetrics;
  /** The registry of build cache nodes (`cacheNodes` section); absent when its face is not served. */
  readonly cacheRegistry: CacheRegistry | undefined;
  /** The provenance service over the server's own store; absent when its face is not served. */
  readonly provenance: ProvenanceService | undefined;
}

/** What every face plugin receives as its options: the context and the server's services. */
export interface FacePluginOptions extends ServerServices {
  readonly ctx: AppContext;
  /**
   * The server's public address, the base of every link it writes (`server.publicUrl`, else the
   * address it listens on). A function: the listen port is known only once the server listens.
   */
  readonly publicUrl: () => string;
}

export type FacePlugin = FastifyPluginAsync<FacePluginOptions>;

/** A service a face needs; absent only when the face was not named to openServices (a mistake in code). */
export function served<T>(service: T | undefined, face: string): T {
  if (service === undefined) throw new Error(`The ${face} face is served without its service: name the face to openServices`);
  return service;
}
