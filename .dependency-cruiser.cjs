// The direction of dependencies (docs/architecture.md), checked by `npm test` (scripts/layers.js):
// query -> sql -> store -> services -> faces, with db/ (handles, migrations, frozen schema) under
// sql and store. A rule names what a layer must not import.

const SERVICES = 'src/(auth|export|provenance|cache-node|cache-registry|mirror|metrics|bes|agents|services|retention)/';
const FACES = 'src/(http|cli)/|src/server\\.ts$|src/workers\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'A cycle makes two modules one; split out what both need.', from: { path: '^src/' }, to: { circular: true } },
    {
      name: 'query-is-the-bottom',
      severity: 'error',
      comment: 'The search language knows nothing of SQL, storage or faces (it also runs in the browser).',
      from: { path: '^src/query/' },
      to: { path: '^src/', pathNot: '^src/query/' },
    },
    {
      name: 'db-below-sql-and-store',
      severity: 'error',
      comment: 'Database handles and migrations know no layer above them.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/db/' },
    },
    {
      name: 'errors-below-store',
      severity: 'error',
      comment: 'Domain errors and problem documents are thrown by the store and services and answered by the faces; they know only the query package (diagnostics).',
      from: { path: '^src/errors/' },
      to: { path: '^src/', pathNot: '^src/(errors|query)/' },
    },
    {
      name: 'sql-below-store',
      severity: 'error',
      comment: 'The compiler and the search indexes use the query package and db/ only.',
      from: { path: '^src/sql/' },
      to: { path: '^src/', pathNot: '^src/(sql|query|db)/' },
    },
    {
      name: 'store-below-services',
      severity: 'error',
      comment: 'The store knows nothing of services or faces.',
      from: { path: '^src/store/' },
      to: { path: `^(${SERVICES}|${FACES})` },
    },
    {
      name: 'services-below-faces',
      severity: 'error',
      comment: 'Services are called by the faces, never the other way round.',
      from: { path: `^${SERVICES}` },
      to: { path: `^(${FACES})` },
    },
    {
      name: 'playground-uses-the-library',
      severity: 'error',
      comment: 'The browser bundle may use the query package, never server code.',
      from: { path: '^playground/src/' },
      to: { path: '^src/', pathNot: '^src/query/' },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript API for dependency-cruiser's own TypeScript parser; swc
    // parses the sources, type-only imports included.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^dist/' },
  },
};
