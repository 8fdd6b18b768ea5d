#!/usr/bin/env node
// Bundles the web app (the builds list, build and trends pages, with CodeMirror, the project's
// query parser and completion, and Chart.js) into dist/web, which the server serves
// (scripts/bundle-page.js does the work).
//
// Usage: node web/build.js [--outdir DIR] [--no-minify]
// scripts/build.js runs it after tsc, so `npm install`, `npm start` and `npm test` build it.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePage, runIfMain } from '../scripts/bundle-page.js';

/**
 * Builds the web app into `outdir` (default dist/web).
 * @param {{ outdir?: string, minify?: boolean }} [options]
 */
export function buildWeb(options = {}) {
  return bundlePage(dirname(fileURLToPath(import.meta.url)), { ...options, outdir: options.outdir ?? 'dist/web' });
}

runIfMain(import.meta.url, 'web app', buildWeb);
