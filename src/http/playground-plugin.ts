// The query playground face: the static page (built by playground/build.js into dist/playground)
// at /playground/, and `GET /api/query/explain?query=` which answers what the page cannot compute
// in the browser: the SQL a query compiles to, for SQLite and PostgreSQL.
//
//   const app = await buildApp(ctx, { plugins: [playgroundPlugin] });
//
// The explain endpoint is open (no credentials): it reads no data, only the query text.

import { BadRequestError, UnavailableError } from '../errors/domain.js';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { pageSecurityHeaders, staticPageOptions } from './static-page.js';
import type { FastifyPluginAsync } from 'fastify';
import type { FacePluginOptions } from './context.js';
import { parseQuery } from '../query/index.js';
import type { CheckedExpr } from '../query/checked.js';
import { explainSql } from '../sql/index.js';
import { parsePlaygroundSection, type PlaygroundSection } from '../config/playground.js';

/** The `playground` section of the server configuration. */
export interface PlaygroundConfig {
  /** Serve the page and the explain endpoint (default true). */
  readonly enabled: boolean;
  /** Directory of the built page (default: dist/playground of this installation). */
  readonly root: string;
}

/** Longest query the explain endpoint accepts, in characters. */
export const MAX_EXPLAIN_QUERY_LENGTH = 10_000;

const here = dirname(fileURLToPath(import.meta.url));
/** src/http/ and dist/http/ both sit two levels below the package root. */
export const DEFAULT_PLAYGROUND_ROOT = resolve(here, '../../dist/playground');

/** Checks the `playground` section (as read from YAML, possibly absent) and fills in defaults. */
export function parsePlaygroundConfig(section: unknown): PlaygroundConfig {
  return playgroundConfig(parsePlaygroundSection(section));
}

function playgroundConfig(s: PlaygroundSection): PlaygroundConfig {
  return { enabled: s.enabled, root: s.root ?? DEFAULT_PLAYGROUND_ROOT };
}

/** A JSON view of the checked AST: each field as its name, type and tool instead of the whole catalog entry. */
export type JsonExpr =
  | { readonly kind: 'all'; readonly span: CheckedExpr['span'] }
  | { readonly kind: 'and' | 'or'; readonly operands: readonly JsonExpr[]; readonly span: CheckedExpr['span'] }
  | { readonly kind: 'not'; readonly operand: JsonExpr; readonly span: CheckedExpr['span'] }
  | {
      readonly kind: 'term';
      readonly field: { readonly name: string; readonly type: string; readonly tool: string | null; readonly multi: boolean };
      readonly predicate: Extract<CheckedExpr, { kind: 'term' }>['predicate'];
      readonly span: CheckedExpr['span'];
    };

export function astToJson(expr: CheckedExpr): JsonExpr {
  switch (expr.kind) {
    case 'all':
      return { kind: 'all', span: expr.span };
    case 'and':
    case 'or':
      return { kind: expr.kind, operands: expr.operands.map(astToJson), span: expr.span };
    case 'not':
      return { kind: 'not', operand: astToJson(expr.operand), span: expr.span };
    case 'term': {
      const f = expr.field;
      return { kind: 'term', field: { name: f.name, type: f.type, tool: f.tool, multi: f.multi }, predicate: expr.predicate, span: expr.span };
    }
  }
}

const explainSchema = {
  summary: 'Explain a search query',
  description:
    'Parses and checks an advanced search query and returns its diagnostics, its checked syntax tree and the SQL it compiles to for SQLite and PostgreSQL. A query with problems answers 200 with its diagnostics, and null tree and SQL.',
  tags: ['query'],
  security: [],
  querystring: {
    type: 'object',
    properties: { query: { type: 'string', description: 'The query text; empty matches every build' } },
    required: ['query'],
  },
} as const;

export function createPlaygroundPlugin(overrides: Partial<PlaygroundConfig> = {}): FastifyPluginAsync<FacePluginOptions> {
  return async (app, opts) => {
    const config = { ...playgroundConfig(opts.faces.playground), ...overrides };
    if (!config.enabled) return;
    const clock = opts.ctx.clock ?? Date.now;

    app.get('/api/query/explain', { schema: explainSchema }, async (request, reply) => {
      const raw = (request.query as { query?: unknown }).query;
      if (Array.isArray(raw)) throw new BadRequestError('Give the query parameter once');
      const text = typeof raw === 'string' ? raw : '';
      if (text.length > MAX_EXPLAIN_QUERY_LENGTH) {
        throw new BadRequestError(`The query is ${text.length} characters long; at most ${MAX_EXPLAIN_QUERY_LENGTH} are accepted`);
      }
      const result = parseQuery(text, { now: clock() });
      const expr = result.ok ? result.expr : undefined;
      return {
        ok: result.ok,
        diagnostics: result.diagnostics,
        ast: expr ? astToJson(expr) : null,
        sql: expr ? { sqlite: explainSql(expr, 'sqlite'), postgres: explainSql(expr, 'postgres') } : null,
      };
    });

    if (!existsSync(resolve(config.root, 'index.html'))) {
      opts.ctx.logger.warn({ root: config.root }, 'the playground is not built; run `npm run build`');
      const notBuilt = async (): Promise<never> => {
        throw new UnavailableError(`The playground is not built (no ${resolve(config.root, 'index.html')}); run \`npm run build\``);
      };
      app.get('/playground', { schema: { hide: true } }, notBuilt);
      app.get('/playground/*', { schema: { hide: true } }, notBuilt);
      return;
    }

    await app.register(fastifyStatic, staticPageOptions(config.root, '/playground/'));
    // `buildscope serve` (and `npm start`) tell the person where to find the page.
    app.addHook('onListen', async () => {
      const url = playgroundUrl(app.addresses().filter((a): a is AddressInfo => typeof a !== 'string'));
      opts.ctx.logger.info({ url }, `query playground: ${url}`);
    });
    app.get('/playground', { schema: { hide: true } }, async (request, reply) => {
      const [path, search] = splitUrl(request.url);
      if (!path.endsWith('/')) return reply.redirect(`${path}/${search}`, 301);
      pageSecurityHeaders(reply.raw);
      return reply.header('cache-control', 'no-cache').sendFile('index.html');
    });
  };
}

/** The page's address on the first listening address (a wildcard address shown as localhost). */
export function playgroundUrl(addresses: readonly { address: string; family: string; port: number }[]): string {
  const a = addresses.find((x) => x.family === 'IPv4') ?? addresses[0];
  if (!a) return '/playground/';
  const host = a.address === '0.0.0.0' || a.address === '::' ? 'localhost' : a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return `http://${host}:${a.port}/playground/`;
}

function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}

/** The playground with the configuration's `playground` section (or its defaults). */
export const playgroundPlugin: FastifyPluginAsync<FacePluginOptions> = createPlaygroundPlugin();
