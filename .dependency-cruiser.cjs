// The direction of dependencies (docs/architecture.md), checked by `npm test`
// (test/architecture/layers.test.ts): query -> sql -> store -> services -> faces, with db/ (handles,
// migrations, frozen schema) under sql and store; the browser pages (web/, playground/) over ui/ and
// the query package. A rule names what a layer must not import.

const SERVICES = 'src/(auth|export|provenance|cache-node|cache-registry|mirror|metrics|bes|agents|services|retention)/';
const FACES = 'src/(http|cli)/|src/server\\.ts$|src/workers\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'A cycle makes two modules one; split out what both need.', from: { path: '^(src|web|playground|ui)/' }, to: { circular: true } },
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
    // The store's rooms (docs/store.md, "Where things are"): events/ at the bottom (how events are
    // stored, read and derived), schema/ over it, then ingest/, search/ and analytics/, with the
    // store class and its API at the top. A room imports from the top only the store's types.
    ...[
      ['events', 'ingest|search|analytics|demo'],
      ['schema', 'ingest|search|demo'],
      ['search', 'ingest|analytics|demo'],
      ['analytics', 'ingest|demo'],
      ['ingest', 'demo'],
      ['demo', 'ingest|events|search|analytics|schema'],
    ].map(([room, below]) => ({
      name: `store-${room}-room`,
      severity: 'error',
      comment: `src/store/${room}/ imports no module of ${below.split('|').join(', ')} and, of the store's top, only types.ts.`,
      from: { path: `^src/store/${room}/` },
      to: { path: `^src/store/((${below})/|(?!types\\.ts$)[^/]+\\.ts$)` },
    })),
    {
      name: 'config-below-faces',
      severity: 'error',
      comment: 'The configuration file (src/config.ts, src/config/) is read by the faces and the composition root; it knows each service only by its own settings module.',
      from: { path: '^src/config(\\.ts$|/)' },
      to: { path: `^(${FACES})` },
    },
    {
      name: 'log-is-a-leaf',
      severity: 'error',
      comment: 'The logger is used by every layer, so it uses none.',
      from: { path: '^src/log\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'module-worker-is-a-leaf',
      severity: 'error',
      comment: 'Starting a worker thread from a module (src/module-worker.ts) is used by the store\'s rooms, so it uses no module of the project.',
      from: { path: '^src/module-worker\\.ts$' },
      to: { path: '^src/' },
    },
    {
      name: 'testing-uses-the-library',
      severity: 'error',
      comment: 'The public test helpers (buildscope/testing) build on the search language only.',
      from: { path: '^src/testing/' },
      to: { path: '^src/', pathNot: '^src/(query|testing)/' },
    },
    {
      name: 'services-below-faces',
      severity: 'error',
      comment: 'Services are called by the faces, never the other way round.',
      from: { path: `^${SERVICES}` },
      to: { path: `^(${FACES})` },
    },
    {
      name: 'bes-is-a-service',
      severity: 'error',
      comment: 'The Build Event Service endpoint is opened by the composition root like the other services and imports no face (services-below-faces holds it too; this names it).',
      from: { path: '^src/bes/' },
      to: { path: `^(${FACES})` },
    },
    // The browser pages (web/, playground/) and what they share (ui/) run the search language in the
    // page; nothing else of the server may reach their bundles. swc, the parser here, does not tell
    // `import type` apart, so the rules below name which modules a page may import at all, and
    // test/architecture/browser-bundles.test.ts checks what esbuild actually bundles (type imports
    // erased): of src/, the query package only.
    {
      name: 'web-uses-the-library',
      severity: 'error',
      comment: 'The web app runs the query package, and takes the shapes of the answers it reads (`import type`) from the one module that gathers them, src/services/web-api.ts; no other server module.',
      from: { path: '^web/' },
      to: { path: '^src/', pathNot: '^src/(query/|services/web-api\\.ts$)' },
    },
    {
      name: 'playground-uses-the-library',
      severity: 'error',
      comment: 'The playground may use the query package, never server code.',
      from: { path: '^playground/' },
      to: { path: '^src/', pathNot: '^src/query/' },
    },
    {
      name: 'ui-uses-the-library',
      severity: 'error',
      comment: 'What the two pages share uses the query package, never server code.',
      from: { path: '^ui/' },
      to: { path: '^src/', pathNot: '^src/query/' },
    },
    {
      name: 'pages-do-not-import-each-other',
      severity: 'error',
      comment: 'The web app and the playground are two bundles; what both need goes to ui/.',
      from: { path: '^(web|playground)/' },
      to: { path: '^(web|playground)/', pathNot: '^$1/' },
    },
    {
      name: 'ui-knows-no-page',
      severity: 'error',
      comment: 'ui/ is below both pages: it imports neither.',
      from: { path: '^ui/' },
      to: { path: '^(web|playground)/' },
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
