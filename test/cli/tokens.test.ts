import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliContext, type CliContext, type CliShop } from '../helpers/cli.js';
import { TEST_DIALECT } from '../helpers/database.js';

// `loyalty tokens create --scopes …`: scoped and expiring tokens from the command line, and the
// audit log's entries of the CLI's writes (actor `cli`).

describe(`loyalty tokens with scopes (${TEST_DIALECT})`, () => {
  let cli: CliContext;
  let shop: CliShop;
  beforeAll(async () => {
    cli = await cliContext();
    shop = await cli.createShop('Scoped');
  });
  afterAll(() => cli.close());

  it('creates a token that may do what its scopes say, and no more', async () => {
    const out = JSON.parse(await cli.ok('tokens', 'create', '--shop', String(shop.shop.id), '--name', 'analytics', '--scopes', 'read,reports:read', '--json'));
    expect(out).toMatchObject({ name: 'analytics', scopes: ['read', 'reports:read'], expires_at: null, token: expect.stringMatching(/^lty_/) });
    expect((await cli.get(out.token, 'customers')).status).toBe(200);
    const refused = await cli.get(out.token, 'audit_events');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'insufficient_scope', message: expect.stringContaining('admin') });
    expect(await cli.ok('tokens', 'list', '--shop', String(shop.shop.id))).toMatch(new RegExp(`^${out.id}\\s+analytics\\s+\\S+\\s+read reports:read`, 'm'));
  });

  it('refuses an unknown scope', async () => {
    const res = await cli.run('tokens', 'create', '--shop', String(shop.shop.id), '--scopes', 'read,everything');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown: everything');
  });

  it('makes tokens that expire, and admin ones by default', async () => {
    const out = JSON.parse(await cli.ok('tokens', 'create', '--shop', String(shop.shop.id), '--expires-in', '2', '--json'));
    expect(out.scopes).toEqual(['admin']);
    expect(Date.parse(out.expires_at) - Date.now()).toBeGreaterThan(3_600_000);
    expect((await cli.get(out.token, 'audit_events')).status).toBe(200);
  });

  it('writes the audit entries of its writes as the CLI, without secrets', async () => {
    const created = JSON.parse(await cli.ok('tokens', 'create', '--shop', String(shop.shop.id), '--name', 'to revoke', '--json'));
    await cli.ok('tokens', 'revoke', String(created.id), '--shop', String(shop.shop.id));
    const events = (await cli.get(shop.token, 'audit_events?resource=api_token&resource_id=' + created.id)).body.data;
    expect(events.map((e: { action: string }) => e.action)).toEqual(['api_token.created', 'api_token.revoked']);
    expect(events[0].actor).toEqual({ type: 'cli', token_id: null, name: null });
    expect(events[1].changes.revoked_at[0]).toBeNull();
    expect(JSON.stringify(events)).not.toContain(created.token);
  });
});
