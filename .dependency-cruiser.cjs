/**
 * The layers of Tributary, as a rule `make lint` enforces (dependency-cruiser). Read it
 * top to bottom as the architecture (ARCHITECTURE.md draws the same picture):
 *
 *   src/app        the composition root: roles, CLI, HTTP app, route list. Imports everything.
 *   commands/      the write side (x402, tokens, keys, webhooks and their delivery).
 *   queries/       the read side (REST lists, Socket.IO notifications, metrics).
 *   projections/   events → read models (the runner, one folder per read model).
 *   infra/         adapters to the outside (Postgres, Redis, Solana, HTTP out, logs,
 *                  metrics) and the indexer; infra/localnet is a development chain,
 *                  infra/migrations the frozen schema history.
 *   web/           the browser pages (bundled by esbuild, served by infra/http/web-assets.ts):
 *                  they import only web/, npm packages and the answers' wire types
 *                  (src/kernel/wire/answers/, types only), and nothing else imports them.
 *   src/kernel     what every layer shares, standing alone: config, domain rules, events
 *                  and the IDL, the error envelope and request input, auth rules, wire
 *                  formats, Redis key names. It imports only itself and npm packages.
 *
 * The context type (src/app/context.ts) is the composition root's alone: everyone else
 * names the few collaborators it takes.
 *
 * Each rule names a direction that is NOT allowed; everything not forbidden is allowed.
 */
const KERNEL = '^src/kernel/';
const APP = '^src/app/';
const COMMANDS = '^commands/';
const QUERIES = '^queries/';
const PROJECTIONS = '^projections/';
const LOCALNET = '^infra/localnet/';
const MIGRATIONS = '^infra/migrations/';
const INFRA = '^infra/';
/** The JSON shapes of the answers the browser pages read: types only, shared by the server and web/. */
const WIRE_ANSWERS = '^src/kernel/wire/answers/';
const FEATURES = [COMMANDS, QUERIES, PROJECTIONS];

/**
 * Imports that break a rule today and are owned by an open follow-up: each is named, so
 * no new one can slip in. Remove an entry when its follow-up lands.
 */
const KNOWN_EXCEPTIONS = [
  // the tokens command reads archived events through the events query (the proof-of-possession area):
  // the archive read it needs belongs in projections/archive (query.ts) or the kernel
  '^commands/tokens/store\\.ts$',
];

module.exports = {
  forbidden: [
    {
      name: 'kernel-imports-only-the-kernel',
      comment: 'The kernel is the bottom layer that every other one stands on: it imports only itself and npm packages, never an adapter, a feature or the composition root.',
      severity: 'error',
      from: { path: KERNEL },
      to: { path: '^(src/app|commands|queries|projections|infra)/' },
    },
    {
      name: 'infra-imports-kernel-and-infra',
      comment: 'Adapters import the kernel and other adapters, never a feature or the composition root. The one exception: infra/postgres/schema.ts composes the kysely Database type from every area\'s tables.ts.',
      severity: 'error',
      from: { path: INFRA, pathNot: [LOCALNET, MIGRATIONS] },
      to: { path: [APP, ...FEATURES], pathNot: '^(projections|commands|queries)/.+/tables\\.ts$' },
    },
    {
      name: 'only-the-schema-composes-tables',
      comment: 'Of infra, only the schema may import the areas\' table types.',
      severity: 'error',
      from: { path: INFRA, pathNot: ['^infra/postgres/schema\\.ts$', LOCALNET, MIGRATIONS] },
      to: { path: '^(projections|commands|queries)/' },
    },
    {
      name: 'projections-import-no-query-or-command',
      comment: 'A read model is built from events alone: projections import the kernel and infra, never the read or write side, nor the composition root.',
      severity: 'error',
      from: { path: PROJECTIONS },
      to: { path: [QUERIES, COMMANDS, APP] },
    },
    {
      name: 'queries-read-projections-tables-only',
      comment: 'The read side imports the kernel and infra, and of projections only what describes a read model: its tables, its stored documents (doc.ts), its reads (query.ts) and the registry of names. Never the write side or the composition root.',
      severity: 'error',
      from: { path: QUERIES },
      to: {
        path: [COMMANDS, APP, PROJECTIONS],
        pathNot: ['^projections/.+/(tables|doc|query)\\.ts$', '^projections/registry\\.ts$'],
      },
    },
    {
      name: 'commands-read-projections-tables-only',
      comment: 'The write side imports the kernel and infra, and of projections only tables and stored documents. Never the read side or the composition root.',
      severity: 'error',
      from: { path: COMMANDS, pathNot: KNOWN_EXCEPTIONS },
      to: {
        path: [QUERIES, APP, PROJECTIONS],
        pathNot: ['^projections/.+/(tables|doc)\\.ts$'],
      },
    },
    {
      name: 'only-the-composition-root-sees-the-context',
      comment: 'The whole AppContext is the composition root\'s: a command, query, projection, adapter or kernel module declares the few collaborators it takes (a db, a clock, the key ring), and src/app hands them over.',
      severity: 'error',
      from: { path: '^(src/kernel|commands|queries|projections|infra)/' },
      to: { path: '^src/app/context\\.ts$' },
    },
    {
      name: 'product-code-never-imports-the-localnet',
      comment: 'The localnet is a development chain; only the composition root (tributary localnet/start) and tests start it.',
      severity: 'error',
      from: { path: '^(src|projections|commands|queries|infra)/', pathNot: [APP, LOCALNET, '^infra/cluster/'] },
      to: { path: LOCALNET },
    },
    {
      name: 'migrations-import-nothing-of-the-app',
      comment: 'A migration is frozen in time: it imports kysely and other migrations, never application code whose shape changes later.',
      severity: 'error',
      from: { path: MIGRATIONS },
      to: { path: '^(src|projections|commands|queries|infra)/', pathNot: MIGRATIONS },
    },
    {
      name: 'web-imports-only-web',
      comment: 'The browser pages run in a browser: they import web/ and npm packages, never server code (infra/http/web-assets.ts bundles them). The one exception: the answers\' wire types (src/kernel/wire/answers/), imported as types only, so the pages and the server read one declaration of each JSON shape.',
      severity: 'error',
      from: { path: '^web/' },
      to: { pathNot: ['^web/', 'node_modules', WIRE_ANSWERS] },
    },
    {
      name: 'web-imports-wire-answers-as-types-only',
      comment: 'What the pages take from the server side is types, never code: esbuild drops a type-only import, so no server module reaches a bundle.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: WIRE_ANSWERS, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'wire-answers-import-nothing',
      comment: 'The answers\' wire types are shapes alone (test/unit/wire-answers.test.ts: they compile to nothing): they import only each other, so a page that imports them pulls in no server code.',
      severity: 'error',
      from: { path: WIRE_ANSWERS },
      to: { pathNot: WIRE_ANSWERS },
    },
    {
      name: 'nothing-imports-web',
      comment: 'The pages are bundled from their entry files, never imported by the server or the tests.',
      severity: 'error',
      from: { pathNot: '^web/' },
      to: { path: '^web/' },
    },
    {
      name: 'no-circular',
      comment: 'No import circles (madge checks them as well).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
