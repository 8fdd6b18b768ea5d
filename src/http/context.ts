// What every part of the HTTP app receives: the context of the server (configuration, database,
// store, logger, clock) and, for a face plugin, the server's auth. Its own module so that the
// routes of src/http/api and the app that registers them do not import each other.

import type { FastifyPluginAsync } from 'fastify';
import type { Auth } from '../auth/index.js';
import { faceSettings, type FaceSettings, type ServerConfig } from '../config.js';
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
  /** Every face's typed settings, as the composition root checked them before opening the database. */
  readonly faces?: FaceSettings;
}

const checkedLater = new WeakMap<AppContext, FaceSettings>();

/**
 * The typed settings of every face: those `openServer` checked, or (for a context built by hand,
 * as tests and benches do) checked now, once per context. Faces read their section here and never
 * parse the configuration themselves.
 */
export function facesOf(ctx: AppContext): FaceSettings {
  if (ctx.faces !== undefined) return ctx.faces;
  let faces = checkedLater.get(ctx);
  if (faces === undefined) {
    faces = faceSettings(ctx.config);
    checkedLater.set(ctx, faces);
  }
  return faces;
}

/** What every face plugin receives as its options. */
export interface FacePluginOptions {
  readonly ctx: AppContext;
  readonly auth: Auth;
  /**
   * The server's public address, the base of every link it writes (`server.publicUrl`, else the
   * address it listens on). A function: the listen port is known only once the server listens.
   */
  readonly publicUrl: () => string;
}

export type FacePlugin = FastifyPluginAsync<FacePluginOptions>;
