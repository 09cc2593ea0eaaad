// The layer rules of src/ (docs/code-layout.md), checked by dependency-cruiser on every `npm test`
// (scripts/check-deps.mjs; `npm run check:deps` alone).
//
// What is checked: the imports Node runs. TypeScript 7 has no compiler API dependency-cruiser can
// read, so it cruises the build (dist/, what `tsc -p tsconfig.build.json` makes of src/), where
// type-only imports are gone. A type-only import loads nothing and cannot make a load-order cycle;
// it is not checked here (keep them pointing down the layers too).
//
// The layers, lowest first: a folder (or top-level module) of src/ imports only from layers
// below its own (not from its neighbours in its layer), so no two top-level folders can import
// each other, even through others.
const LAYERS = [
  ['errors'], // the error every layer throws; it imports nothing
  ['validation', 'native-addon'], // request-body checks (Problems); the optional native addon (readers, addresses)
  ['stores'], // the only place that speaks to a database engine
  ['query'], // the query language and planner, engine-neutral
  ['domain', 'render'], // rules without HTTP or SQL: keys, tenancy, datasets, boards, recipients, kinds; a result's chart as an image
  ['cluster', 'settings', 'ops'], // several nodes on one store; every setting; metrics, disk, logs
  ['ingest', 'notify'], // the ingest path and writer; notification delivery
  ['jobs'], // background evaluation: triggers, SLOs and burn alerts, signals, service maps
  ['http'], // HTTP plumbing: Fastify, auth, admission, error dialects (imports no route)
  ['api'], // routes: parse, call domain/, answer
  ['app'], // the composition root
  ['server', 'cli'], // a server process; the CLI's commands
  ['main'], // the `waggle` command
];

const rank = new Map(LAYERS.flatMap((names, i) => names.map((name) => [name, i])));
const pathOf = (names) => `^(${names.join('|')})(/|\\.js$)`;

// One rule per folder: it imports nothing from its own layer's other folders or from a layer above.
const layerRules = [...rank].map(([name, i]) => ({
  name: `layer-${name}`,
  comment: `${name} imports only from the layers below its own (.dependency-cruiser.cjs, LAYERS)`,
  severity: 'error',
  from: { path: pathOf([name]) },
  to: { path: pathOf([...rank].filter(([other, j]) => other !== name && j >= i).map(([other]) => other)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no module imports itself through others',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-unknown-top-level',
      comment: 'every folder and module at the top of src/ has a place in LAYERS',
      severity: 'error',
      from: { pathNot: [pathOf([...rank.keys()]), 'node_modules'] },
      to: {},
    },
    {
      name: 'http-not-api',
      comment: 'http/ is plumbing: the composition root (app.ts) puts the routes on it',
      severity: 'error',
      from: { path: '^http/' },
      to: { path: '^api/' },
    },
    {
      name: 'routes-not-routes',
      comment:
        'an api/v1 route module imports no other route module: what two share lives in domain/ or in a shared api module (api/v1/schemas.ts, api/v1/shapes/, api/*.ts); index.ts registers them all',
      severity: 'error',
      from: { path: '^api/v1/', pathNot: '^api/v1/(index|schemas)\\.js$|^api/v1/shapes/' },
      to: { path: '^api/v1/', pathNot: '^api/v1/schemas\\.js$|^api/v1/shapes/' },
    },
    {
      name: 'domain-not-api-http',
      comment: 'domain/ holds rules without HTTP: it imports neither routes nor plumbing',
      severity: 'error',
      from: { path: '^domain/' },
      to: { path: '^(api|http)/' },
    },
    {
      name: 'engine-drivers-in-stores',
      comment: 'only stores/ speaks to a database engine',
      severity: 'error',
      from: { pathNot: '^stores/' },
      to: { path: 'node_modules/(@duckdb/node-api|@duckdb/node-bindings|@clickhouse/client|pg|better-sqlite3)/' },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^web/' },
    moduleSystems: ['es6', 'cjs'],
  },
};
