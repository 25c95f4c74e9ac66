// Which room of src/ may import which (ARCHITECTURE.md, "Rooms and arrows"), the function-length
// budget, and where SQL and dialect checks may be written: each rule here is a paragraph of
// ARCHITECTURE.md, so that a wrong arrow fails lint instead of waiting for a review.

const PROGRAMME = ['tiers', 'earning', 'referrals', 'redemptions'];
const ENTRIES = ['cli', 'webhooks', 'connections'];

/** Files that wire rooms together, and may import any: routes, the CLI, jobs, the app. */
const ENTRY_FILES = [
  'src/app.ts',
  'src/main.ts',
  'src/jobs.ts',
  'src/cli/**',
  'src/webhooks/**',
  'src/connections/**',
  'src/**/routes.ts',
  'src/**/read-routes.ts',
  'src/records/import.ts',
  'src/customers/export.ts',
  'src/customers/redact.ts',
  'src/shops/erasure.ts',
];

/** [files, rooms they must not import, why]: lower rooms never import higher ones. */
const LAYERS = [
  [
    ['src/clock.ts', 'src/errors.ts', 'src/config.ts', 'src/core/**'],
    ['db', 'events', 'shops', 'http', 'customers', 'records', 'ledger', ...PROGRAMME, ...ENTRIES],
    'the base imports no room',
  ],
  [
    ['src/db/**'],
    ['events', 'shops', 'http', 'customers', 'records', 'ledger', ...PROGRAMME, ...ENTRIES],
    'db/ imports no room above it (migrations are frozen in time)',
  ],
  [['src/events/**', 'src/shops/**'], ['http', 'customers', 'records', 'ledger', ...PROGRAMME, ...ENTRIES], 'events/ and shops/ sit under every other room'],
  [['src/http/**'], ['customers', 'records', 'ledger', ...PROGRAMME, ...ENTRIES], 'http/ knows requests, shops and tokens, no domain room'],
  [['src/customers/**'], ['records', 'ledger', ...PROGRAMME, ...ENTRIES], 'customers/ is looked up by the ledger and the programme'],
  [['src/records/**'], ['ledger', ...PROGRAMME, ...ENTRIES, 'resources'], 'the records engine knows no programme: resources name their effects'],
  [['src/ledger/**'], ['records', ...PROGRAMME, ...ENTRIES], 'the ledger knows no rule, tier or referral'],
  [['src/tiers/**'], ['records', 'earning', 'referrals', 'redemptions', ...ENTRIES], 'tiers/ follows the ledger and knows no other part of the programme'],
  [
    ['src/earning/**', 'src/referrals/**', 'src/redemptions/**'],
    [...ENTRIES, 'records/resources'],
    'the programme uses the records engine, not the descriptions that name its effects',
  ],
  [['src/records/resources/**'], ENTRIES, 'resources describe records and name their effects'],
];

/** Deliberate climbs, each with its reason (ARCHITECTURE.md lists them). */
const CLIMBS = [
  // A referral is written and shown as its record routes write and show it.
  ['src/referrals/service.ts', 'records/resources/referrals'],
];

/** The import rule of a layer: its rooms, and dialect checks outside db/. */
const layerRule = (rooms, message) => [
  'error',
  {
    patterns: [
      { regex: `^(\\./|(\\.\\./)+)(${rooms.join('|')})/`, message: `${message} (ARCHITECTURE.md)` },
      { regex: 'db/dialect(\\.js)?$', importNames: ['isPostgres'], message: 'dialect checks stay in db/ (ARCHITECTURE.md)' },
    ],
  },
];

export const boundaries = [
  ...LAYERS.map(([files, rooms, message]) => ({ files, ignores: ENTRY_FILES, rules: { 'no-restricted-imports': layerRule(rooms, message) } })),
  ...CLIMBS.map(([file, to]) => {
    const [, rooms, message] = LAYERS.findLast(([files]) => files.some((f) => file.startsWith(f.replace('**', ''))));
    return {
      files: [file],
      rules: {
        'no-restricted-imports': layerRule(
          rooms.filter((r) => r !== to.slice(0, to.lastIndexOf('/'))),
          message,
        ),
      },
    };
  }),
  {
    // Routes read and write through repository functions (ARCHITECTURE.md).
    files: ['src/**/routes.ts', 'src/**/read-routes.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'kysely', importNames: ['sql'], message: 'SQL lives in repository functions (ARCHITECTURE.md)' }] }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.property.name=/^(selectFrom|updateTable|insertInto|deleteFrom)$/]',
          message: 'SQL lives in repository functions (ARCHITECTURE.md)',
        },
      ],
    },
  },
  {
    // Functions stay under about 80 lines (ARCHITECTURE.md).
    files: ['src/**/*.ts', 'bench/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Named exceptions: route tables and command tables (a list of short declarations), a
    // frozen migration, the OpenAPI components' one pass, and a benchmark's report.
    files: [
      'src/ledger/routes.ts',
      'src/records/routes.ts',
      'src/redemptions/routes.ts',
      'src/storefront/keys-routes.ts',
      'src/cli/demo.ts',
      'src/cli/shops.ts',
      'src/db/migrations/003_records.ts',
      'src/http/openapi-components.ts',
      'bench/orders.ts',
      'src/storefront/spend-routes.ts',
    ],
    rules: { 'max-lines-per-function': 'off' },
  },
];
