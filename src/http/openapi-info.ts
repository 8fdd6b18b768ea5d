// The `info` object of the OpenAPI document.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export const SERVER_VERSION: string = pkg.version;

export const OPENAPI_INFO = {
  title: 'Buildscope server API',
  version: SERVER_VERSION,
  license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
  description:
    'Access tokens, the build listing with advanced search, build ingest. Errors are RFC 7807 problem documents (application/problem+json). ' +
    'Authenticate with Authorization: Bearer <access key or access token>, or Basic user:password.',
} as const;
