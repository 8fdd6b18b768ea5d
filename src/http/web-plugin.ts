// The web app's face: the pages (/builds, /builds/:id, /trends, built by web/build.js into
// dist/web); the short build links /s/:id (links.ts) lead to them. The calls behind the pages are part of
// the REST API (src/http/api/search.ts), so the playground and other clients use them too.
//
//   const app = await buildApp(ctx, { plugins: [sessionPlugin, webPlugin] });

import { UnavailableError } from '../errors/domain.js';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { pageSecurityHeaders, staticPageOptions } from './static-page.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { FacePluginOptions } from './context.js';

const here = dirname(fileURLToPath(import.meta.url));
/** src/http/ and dist/http/ both sit two levels below the package root. */
export const DEFAULT_WEB_ROOT = resolve(here, '../../dist/web');

export interface WebConfig {
  /** Directory of the built pages (default dist/web of this installation). */
  readonly root: string;
}

export function createWebPlugin(overrides: Partial<WebConfig> = {}): FastifyPluginAsync<FacePluginOptions> {
  return async (app, opts) => {
    const config: WebConfig = { root: DEFAULT_WEB_ROOT, ...overrides };

    // Short links (`<server>/s/<id>`) are answered by links.ts, which redirects them here.

    if (!existsSync(resolve(config.root, 'index.html'))) {
      opts.ctx.logger.warn({ root: config.root }, 'the web pages are not built; run `npm run build`');
      const notBuilt = async (): Promise<never> => {
        throw new UnavailableError(`The web pages are not built (no ${resolve(config.root, 'index.html')}); run \`npm run build\``);
      };
      for (const url of PAGES) app.get(url, { schema: { hide: true } }, notBuilt);
      return;
    }

    await app.register(fastifyStatic, { ...staticPageOptions(config.root, '/web/'), decorateReply: false });
    // Every page is the same document; the script reads the address and draws the page. The
    // pages need no credentials to load: the script asks /api/session and shows the sign-in form.
    const page = async (_request: FastifyRequest, reply: FastifyReply) => {
      pageSecurityHeaders(reply.raw);
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(await indexHtml(config.root));
    };
    for (const url of PAGES) app.get(url, { schema: { hide: true } }, page);
  };
}

const PAGES = ['/builds', '/builds/:id', '/compare/:a/:b', '/trends', '/tests', '/tests/:id', '/failure-groups/:id', '/signin'] as const;

async function indexHtml(root: string): Promise<string> {
  // Read per request (it is small): a rebuilt bundle is served without a restart.
  return readFile(resolve(root, 'index.html'), 'utf8');
}

/** The web pages with the default configuration. */
export const webPlugin: FastifyPluginAsync<FacePluginOptions> = createWebPlugin();
