// What every part of the HTTP app receives: the context of the server (configuration, database,
// store, logger, clock) and, for a face plugin, the server's auth. Its own module so that the
// routes of src/http/api and the app that registers them do not import each other.

import type { FastifyPluginAsync } from 'fastify';
import type { Auth } from '../auth/index.js';
import type { FaceSettings, ServerConfig } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Logger } from '../log.js';
import type { BuildStore } from '../store/types.js';

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
  /**
   * Every face's typed settings, as the composition root checked them before opening the
   * database; absent in a context built by hand (tests, benches), when buildApp checks them.
   */
  readonly faces?: FaceSettings;
}

/** What every face plugin receives as its options. */
export interface FacePluginOptions {
  readonly ctx: AppContext;
  readonly auth: Auth;
  /** Every face's typed settings: the plugin reads its own section here and never parses it. */
  readonly faces: FaceSettings;
  /**
   * The server's public address, the base of every link it writes (`server.publicUrl`, else the
   * address it listens on). A function: the listen port is known only once the server listens.
   */
  readonly publicUrl: () => string;
}

export type FacePlugin = FastifyPluginAsync<FacePluginOptions>;
