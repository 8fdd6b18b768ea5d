// How the server serves a bundled browser page (the playground, the web app): from this server
// only (a content security policy), revalidated on every load (the bundle's names are not
// content-hashed), the page document itself served by the face's own routes.

import type { FastifyStaticOptions } from '@fastify/static';

/**
 * Pages load only from this server. CodeMirror injects style elements and Chart.js sets inline
 * styles on its canvas: 'unsafe-inline' for styles only.
 */
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export function pageSecurityHeaders(res: { setHeader(name: string, value: string): unknown }): void {
  res.setHeader('content-security-policy', CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
}

/** @fastify/static options for a page's files under `prefix` (e.g. `/web/`). */
export function staticPageOptions(root: string, prefix: string): FastifyStaticOptions {
  return {
    root,
    prefix,
    // The page itself is served by the face's routes: the router ignores trailing slashes, and
    // the page's relative asset addresses need the address to end in one.
    index: false,
    redirect: false,
    cacheControl: true,
    maxAge: 0,
    setHeaders: pageSecurityHeaders,
  };
}
