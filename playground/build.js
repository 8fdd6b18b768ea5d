#!/usr/bin/env node
// Bundles the query playground into dist/playground, which the server serves at /playground
// (scripts/bundle-page.js does the work).
//
// Usage: node playground/build.js [--outdir DIR] [--no-minify]
// scripts/build.js runs it after tsc, so `npm install`, `npm start` and `npm test` build it.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePage, runIfMain } from '../scripts/bundle-page.js';

/**
 * Builds the playground into `outdir` (default dist/playground).
 * @param {{ outdir?: string, minify?: boolean }} [options]
 */
export function buildPlayground(options = {}) {
  return bundlePage(dirname(fileURLToPath(import.meta.url)), { ...options, outdir: options.outdir ?? 'dist/playground' });
}

runIfMain(import.meta.url, 'playground', buildPlayground);
