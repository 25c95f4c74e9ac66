import { shopJson, ShopUpdate } from '../shops/routes.js';
import type { Command } from 'commander';
import { compileValidator, toErrorDetails } from '../core/validation.js';
import { shopSettingErrors } from '../shops/settings.js';
import { isoTime } from '../clock.js';
import { countShopRows, ERASURE_CHUNK_ROWS, eraseShop } from '../shops/erasure.js';
import { tokenJson } from '../access/routes.js';
import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { changesOf } from '../http/audit.js';
import { writeCliAuditEntry } from '../shops/audit.js';
import {
  createShop,
  createToken,
  EXPIRY_MODES,
  findToken,
  getShop,
  listShops,
  listTokens,
  revokeToken,
  TIER_METRICS,
  TIER_WINDOWS,
  updateShop,
  type Shop,
  type ShopSettings,
  type TokenOptions,
} from '../shops/repository.js';
import { isScope, SCOPES, type Scope } from '../shops/scopes.js';
import { CliError, output, parseId, table, withDatabase } from './context.js';
import { rekeyDays } from '../ledger/totals.js';
import { isTimeZone } from '../core/time-zones.js';

const NEVER = 'never';

/** `--scopes read,rewards:write` (commas or spaces). */
function parseScopes(value: string): Scope[] {
  const scopes = value.split(/[\s,]+/).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (scopes.length === 0 || unknown.length > 0)
    throw new CliError(`--scopes takes scopes such as admin, read, rewards:write; unknown: ${unknown.join(', ') || '(none given)'}`);
  return scopes as Scope[];
}

/** Creates a token, and its audit entry as the CLI's, in one transaction. */
export function createAuditedToken(db: DB, shopId: number, name: string, now: number, options: TokenOptions) {
  return transaction(db, async (trx) => {
    const created = await createToken(trx, shopId, name, now, options);
    await writeCliAuditEntry(trx, shopId, now, {
      action: 'api_token.created',
      resourceId: String(created.row.id),
      changes: changesOf(null, tokenJson(created.row)),
    });
    return created;
  });
}

/** Commander stores a parser's null as '', so "never" stays a word until it reaches the shop. */
function expiryDays(value: string): number | typeof NEVER {
  if (value === 'never' || value === 'none') return NEVER;
  const days = parseId(value, '--expiry-days');
  if (days > 36500) throw new CliError('--expiry-days must be at most 36500');
  return days;
}

function timeZone(value: string): string {
  if (!isTimeZone(value)) throw new CliError(`--timezone must be an IANA time zone name such as Europe/Berlin, got ${JSON.stringify(value)}`);
  return value;
}

const toDays = (value: number | typeof NEVER | undefined): number | null | undefined => (value === NEVER ? null : value);

function shopName(value: string): string {
  const name = value.trim();
  if (name === '' || name.length > 255) throw new CliError('--name must be 1 to 255 characters');
  return name;
}

/**
 * The settings of PATCH /shop that take a flag named after their field (`--vip-tier-metric`
 * for vip_tier_metric): each flag's text becomes the value the API would be sent, and the API's
 * own schema and checks judge it (judgeSettings), so a value the API refuses is refused alike.
 */
const SETTING_FLAGS = {
  points_pending_days: ['<days>', 'days after an order is placed before its points can be spent (0: at once)', 'integer'],
  points_expiry_mode: ['<mode>', `${EXPIRY_MODES.join(' or ')}: each grant expires on its own, or the whole balance after --points-inactivity-days`, 'text'],
  points_inactivity_days: ['<days>', 'days without activity after which the balance expires in inactivity mode, or "none"', 'integer'],
  expiry_reminder_days: ['<days>', 'days before an expiry that points.expiring is sent, comma-separated (up to 3), or "none"', 'list'],
  vip_tier_window: ['<window>', `what VIP tiers count over: ${TIER_WINDOWS.join(', ')}`, 'text'],
  vip_tier_metric: ['<metric>', `what VIP tier thresholds are in: ${TIER_METRICS.join(', ')} (amount_spent needs --currency)`, 'text'],
  vip_tier_retention_days: ['<days>', 'days a customer who drops below their tier keeps it, or "none"', 'integer'],
  currency: ['<code>', 'ISO 4217 code of the orders amount_spent counts, or "none"', 'text'],
} as const;

type SettingFlags = Partial<Record<keyof typeof SETTING_FLAGS, string>> & { restoreRedeemedPointsOnRefund?: boolean };

const camel = (field: string) => field.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
const flagOf = (field: string) => `--${field.replace(/_/g, '-')}`;

/** Adds the settings' flags to a command. */
function settingOptions(command: Command): Command {
  for (const [field, [value, help]] of Object.entries(SETTING_FLAGS)) command.option(`${flagOf(field)} ${value}`, help);
  return command
    .option('--restore-redeemed-points-on-refund', 'a refunded, voided or cancelled order voids the redemption whose code it used, giving its points back')
    .option('--no-restore-redeemed-points-on-refund', 'a refund leaves the redemptions of its codes as they are');
}

/** The value a flag's text stands for, as the API would be sent it ("none": null, or no days). */
function settingValue(kind: 'integer' | 'text' | 'list', text: string): unknown {
  const none = text === 'none' || text === 'never';
  if (kind === 'list')
    return none
      ? []
      : text
          .split(/[\s,]+/)
          .filter(Boolean)
          .map((d) => (/^-?\d+$/.test(d) ? Number(d) : d));
  if (none) return null;
  return kind === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
}

/** The settings the flags give, as PATCH /shop's body would hold them. */
function settingsOf(opts: SettingFlags): ShopSettings {
  const settings: Record<string, unknown> = {};
  for (const [field, [, , kind]] of Object.entries(SETTING_FLAGS)) {
    const text = (opts as Record<string, string | undefined>)[camel(field)];
    if (text !== undefined) settings[field] = settingValue(kind, text);
  }
  if (opts.restoreRedeemedPointsOnRefund !== undefined) settings.restore_redeemed_points_on_refund = opts.restoreRedeemedPointsOnRefund;
  return settings as ShopSettings;
}

/** Refuses settings exactly as PATCH /shop does (its body's schema, then its checks against the shop), naming the flags. */
function judgeSettings(settings: ShopSettings, shop: Shop): void {
  const validate = compileValidator(ShopUpdate);
  const errors = validate(settings) ? shopSettingErrors(settings, shop) : toErrorDetails(validate.errors ?? []);
  if (errors.length === 0) return;
  const flag = (param: string) => {
    const field = param.replace(/\[\d+\]$/, '');
    return field === 'points_expiry_days' ? '--expiry-days' : flagOf(field);
  };
  throw new CliError(errors.map((e) => `${flag(e.param)}: ${e.message} (${e.code})`).join('\n'));
}

/** Changes the shop's settings after judging them, with the CLI's audit entry, in the caller's transaction. */
async function changeShop(trx: DB, before: Shop, settings: ShopSettings, now: number, audited: boolean): Promise<Shop> {
  judgeSettings(settings, before);
  const after = (await updateShop(trx, before.id, settings, now, rekeyDays))!;
  if (audited)
    await writeCliAuditEntry(trx, before.id, now, {
      action: 'shop.updated',
      resourceId: String(before.id),
      changes: changesOf(shopView(before), shopView(after)),
    });
  return after;
}

/** The shop as GET /shop shows it. */
const shopView = (shop: Shop) => shopJson(shop);

const SHOP_COLUMNS = ['id', 'name', 'per_event_expiry', 'points_expiry_days', 'timezone', 'created_at'];

/** Rows per table for people: the tables that have any, and the total. */
function rowsTable(rows: Record<string, number>): string {
  const lines = Object.entries(rows)
    .filter(([, n]) => n > 0)
    .map(([name, n]) => ({ table: name, rows: n }));
  return table([...lines, { table: 'total', rows: total(rows) }], ['table', 'rows']);
}

const total = (rows: Record<string, number>) => Object.values(rows).reduce((sum, n) => sum + n, 0);

export function registerShopCommands(program: Command): void {
  const shops = program.command('shops').description('Create, list, update and erase shops');

  settingOptions(
    shops
      .command('create')
      .description('Create a shop and its first API token (shown once)')
      .requiredOption('--name <name>', 'shop name', shopName)
      .option('--per-event-expiry', 'allow points events to set their own expires_at', false)
      .option('--expiry-days <days>', 'days until granted points expire, or "never"', expiryDays)
      .option('--timezone <zone>', 'IANA time zone of the days of reports (default UTC)', timeZone),
  )
    .option('--json', 'print JSON', false)
    .action(async (opts: SettingFlags & { name: string; perEventExpiry: boolean; expiryDays?: number | typeof NEVER; timezone?: string; json: boolean }) => {
      const settings: ShopSettings = { ...settingsOf(opts), points_expiry_days: toDays(opts.expiryDays) ?? null };
      if (opts.perEventExpiry) settings.per_event_expiry = true;
      if (opts.timezone !== undefined) settings.timezone = opts.timezone;
      await withDatabase(async ({ db }) => {
        const now = Date.now();
        // One transaction: settings the API would refuse leave no shop behind.
        const { shop, token } = await transaction(db, async (trx) => {
          const created = await createShop(trx, { name: opts.name }, now);
          return { shop: await changeShop(trx, created, settings, now, false), token: (await createToken(trx, created.id, 'default', now)).token };
        });
        output(opts.json, { shop: shopView(shop), token }, () => `Created shop ${shop.id} (${shop.name}).\nAPI token (shown once, keep it secret): ${token}`);
      });
    });

  shops
    .command('list')
    .description('List shops')
    .option('--json', 'print JSON', false)
    .action(async (opts: { json: boolean }) => {
      await withDatabase(async ({ db }) => {
        const rows = (await listShops(db)).map(shopView);
        output(opts.json, { shops: rows }, () => table(rows, SHOP_COLUMNS));
      });
    });

  settingOptions(
    shops
      .command('update <id>')
      .description("Change a shop's settings (those of PATCH /shop)")
      .option('--name <name>', 'new name', shopName)
      .option('--per-event-expiry', 'allow points events to set their own expires_at')
      .option('--no-per-event-expiry', "use the shop's expiry for every points event")
      .option('--expiry-days <days>', 'days until granted points expire, or "never"', expiryDays)
      .option('--timezone <zone>', 'IANA time zone of the days of reports; the days already kept move to it', timeZone),
  )
    .option('--json', 'print JSON', false)
    .action(
      async (
        id: string,
        opts: SettingFlags & { name?: string; perEventExpiry?: boolean; expiryDays?: number | typeof NEVER; timezone?: string; json: boolean },
      ) => {
        const shopId = parseId(id, 'shop id');
        const settings: ShopSettings = settingsOf(opts);
        if (opts.name !== undefined) settings.name = opts.name;
        if (opts.perEventExpiry !== undefined) settings.per_event_expiry = opts.perEventExpiry;
        if (opts.expiryDays !== undefined) settings.points_expiry_days = toDays(opts.expiryDays);
        if (opts.timezone !== undefined) settings.timezone = opts.timezone;
        if (Object.keys(settings).length === 0)
          throw new CliError('Nothing to change: give --name, --expiry-days, --timezone or another setting (loyalty shops update --help)');
        await withDatabase(async ({ db }) => {
          const now = Date.now();
          // One transaction: a new time zone re-keys the report days with the change itself, and the audit entry is written with it.
          const shop = await transaction(db, async (trx) => {
            const before = await getShop(trx, shopId);
            return before && (await changeShop(trx, before, settings, now, true));
          });
          if (!shop) throw new CliError(`No shop with id ${shopId}`);
          output(opts.json, { shop: shopView(shop) }, () => table([shopView(shop)], SHOP_COLUMNS));
        });
      },
    );

  shops
    .command('delete')
    .summary('Erase a shop and all of its data, irreversibly (asks for --yes)')
    .description(
      "Erase a shop and everything stored for it (customers, ledger, orders, rewards, webhooks, tokens...), irreversibly, as Shopify's shop/redact asks. " +
        'Its tokens are revoked first (running API processes refuse them within 2 seconds); its rows then go in transactions of at most --chunk-size rows, ' +
        'so other shops are served meanwhile. Prints the rows deleted per table. Without --yes it only prints what it would delete, and exits 2. ' +
        'Re-running it after an interruption finishes the job.',
    )
    .requiredOption('--shop <id>', 'the shop to erase')
    .option('--yes', 'erase it: without this nothing is deleted', false)
    .option('--chunk-size <rows>', 'rows deleted per transaction', String(ERASURE_CHUNK_ROWS))
    .option('--json', 'print JSON', false)
    .action(async (opts: { shop: string; yes: boolean; chunkSize: string; json: boolean }) => {
      const shopId = parseId(opts.shop, '--shop');
      const chunkSize = parseId(opts.chunkSize, '--chunk-size');
      await withDatabase(async ({ db }) => {
        const shop = await getShop(db, shopId);
        const label = `shop ${shopId}${shop ? ` (${shop.name})` : ''}`;
        if (!opts.yes) {
          const rows = await countShopRows(db, shopId);
          if (total(rows) === 0) throw new CliError(`No shop with id ${shopId}`);
          output(opts.json, { shop_id: shopId, would_delete: rows }, () => `Erasing ${label} would delete, irreversibly:\n${rowsTable(rows)}`);
          throw new CliError(`${label} was not erased: add --yes to delete its ${total(rows)} rows for good`);
        }
        const { deleted, transactions } = await eraseShop(db, shopId, { chunkSize });
        // Nothing of it was there (an erasure that finished already): there was no such shop.
        if (total(deleted) === 0) throw new CliError(`No shop with id ${shopId}`);
        output(opts.json, { shop_id: shopId, deleted, transactions }, () => `Erased ${label} in ${transactions} transactions:\n${rowsTable(deleted)}`);
      });
    });

  const tokens = program.command('tokens').description('Create, list and revoke API tokens');

  tokens
    .command('create')
    .description('Create an API token for a shop (shown once)')
    .requiredOption('--shop <id>', 'shop id')
    .option('--name <name>', 'a label to tell tokens apart', 'default')
    .option('--scopes <scopes>', `what it may do, comma-separated: ${SCOPES.slice(0, 4).join(', ')}… (docs/access.md)`, parseScopes, ['admin'])
    .option('--expires-in <hours>', 'hours until it stops working (default: never)', (value) => parseId(value, '--expires-in'))
    .option('--json', 'print JSON', false)
    .action(async (opts: { shop: string; name: string; scopes: Scope[]; expiresIn?: number; json: boolean }) => {
      const shopId = parseId(opts.shop, '--shop');
      await withDatabase(async ({ db }) => {
        if (!(await getShop(db, shopId))) throw new CliError(`No shop with id ${shopId}`);
        const now = Date.now();
        const expiresAt = opts.expiresIn === undefined ? null : now + opts.expiresIn * 3_600_000;
        const { token, row } = await createAuditedToken(db, shopId, opts.name, now, { scopes: opts.scopes, expiresAt });
        output(
          opts.json,
          { id: row.id, shop_id: shopId, name: row.name, hint: row.hint, scopes: row.scopes, expires_at: isoTime(row.expires_at), token },
          () =>
            `Created token ${row.id} (${row.name}; ${row.scopes.join(' ')}${expiresAt === null ? '' : `; expires ${isoTime(expiresAt)}`}) for shop ${shopId}.\n` +
            `API token (shown once, keep it secret): ${token}`,
        );
      });
    });

  tokens
    .command('list')
    .description("List a shop's tokens (never their secrets)")
    .requiredOption('--shop <id>', 'shop id')
    .option('--json', 'print JSON', false)
    .action(async (opts: { shop: string; json: boolean }) => {
      const shopId = parseId(opts.shop, '--shop');
      await withDatabase(async ({ db }) => {
        const rows = (await listTokens(db, shopId)).map((t) => ({
          ...t,
          scopes: t.scopes.join(' '),
          created_at: isoTime(t.created_at),
          revoked_at: isoTime(t.revoked_at),
          expires_at: isoTime(t.expires_at),
          last_used_at: isoTime(t.last_used_at),
        }));
        output(opts.json, { tokens: rows }, () => table(rows, ['id', 'name', 'hint', 'scopes', 'created_at', 'expires_at', 'last_used_at', 'revoked_at']));
      });
    });

  tokens
    .command('revoke <tokenId>')
    .description('Revoke a token; requests with it answer 401 from now on')
    .requiredOption('--shop <id>', 'shop id')
    .action(async (tokenId: string, opts: { shop: string }) => {
      const shopId = parseId(opts.shop, '--shop');
      const id = parseId(tokenId, 'token id');
      await withDatabase(async ({ db }) => {
        const now = Date.now();
        const revoked = await transaction(db, async (trx) => {
          const before = await findToken(trx, shopId, id);
          if (before === undefined || !(await revokeToken(trx, shopId, id, now))) return false;
          const after = (await findToken(trx, shopId, id))!;
          await writeCliAuditEntry(trx, shopId, now, {
            action: 'api_token.revoked',
            resourceId: String(id),
            changes: changesOf(tokenJson(before), tokenJson(after)),
          });
          return true;
        });
        if (!revoked) throw new CliError(`Shop ${shopId} has no token ${id}`);
        process.stdout.write(`Revoked token ${id} of shop ${shopId}.\n`);
      });
    });
}
