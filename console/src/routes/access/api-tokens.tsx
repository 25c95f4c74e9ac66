import type { components } from '@loyalty-api/client';
import { useState } from 'react';
import { ConfirmButton } from '../../components/confirm-button';
import type { FieldSpec } from '../../components/record-form';
import type { RecordKind } from '../../components/record-section';
import { useClient } from '../../lib/api';
import { formatTime } from '../../lib/format';
import { recordApi, type Row } from '../../lib/records';
import { readToken } from '../../lib/session';

// The shop's API tokens (docs/access.md): list, create with scopes, the
// secret shown once, revoke. The page needs `admin`, which covers every scope, so every scope
// the API knows is offered; the API refuses one the signing-in token lacks all the same.

type Scope = components['schemas']['ApiToken']['scopes'][number];
type ResourceOf<S> = S extends `${infer R}:${string}` ? R : never;

// Typed by the API's own list of scopes: a resource it adds fails the build until it is here.
const RESOURCES: Record<ResourceOf<Scope>, true> = {
  customers: true,
  orders: true,
  subscriptions: true,
  points_events: true,
  redemptions: true,
  rewards: true,
  vip_tiers: true,
  referrals: true,
  campaigns: true,
  earning_rules: true,
  webhooks: true,
  storefront_keys: true,
  connections: true,
  reports: true,
  shop: true,
};

const SCOPES: readonly Scope[] = ['admin', 'read', ...Object.keys(RESOURCES).flatMap((r) => [`${r}:read`, `${r}:write`] as Scope[])];

const PATH = '/merchant_api/v1/api_tokens';

/** Whether a token is this console's own (its hint is the end of the token signed in with). */
const isOwn = (row: Row): boolean => {
  const token = readToken();
  return token !== null && String(row.hint).endsWith(`…${token.slice(-4)}`);
};

function state(row: Row): string {
  if (row.revoked_at) return `Revoked ${formatTime(String(row.revoked_at))}`;
  if (row.expires_at && Date.parse(String(row.expires_at)) <= Date.now()) return 'Expired';
  return 'Active';
}

const fields: FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', placeholder: 'analytics export' },
  { name: 'scopes', label: 'Scopes', kind: 'choices', all: 'admin', options: SCOPES },
  { name: 'expires_at', label: 'Expires at (UTC, optional)', kind: 'datetime' },
];

export const apiTokens: RecordKind = {
  path: PATH,
  title: 'API tokens',
  singular: 'API token',
  unpaged: true,
  empty: 'No API tokens.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Name', cell: (r) => (isOwn(r) ? `${String(r.name)} (this console)` : String(r.name)) },
    { label: 'Token', cell: (r) => <code>{String(r.hint)}</code> },
    { label: 'Scopes', cell: (r) => (r.scopes as string[]).join(', ') },
    { label: 'Expires', cell: (r) => formatTime(r.expires_at as string | null) },
    { label: 'Last used', cell: (r) => (r.last_used_at ? formatTime(String(r.last_used_at)) : 'not yet') },
    { label: 'Status', cell: state },
  ],
  fields,
  actions: (r, refresh) => (r.revoked_at ? null : <RevokeToken row={r} refresh={refresh} />),
  // The secret is in this answer only: the list shows its last characters.
  created: (r) => (
    <>
      <p>API token {r.id} created. Its secret, shown this once (keep it where the integration reads it; the console cannot show it again):</p>
      <CopySecret secret={String(r.token)} label="Copy token" />
    </>
  ),
};

function RevokeToken({ row, refresh }: { row: Row; refresh: () => Promise<void> }) {
  const api = recordApi(useClient(), PATH);
  const own = isOwn(row) ? ' It is the token this console is signed in with: the console stops working until you sign in with another.' : '';
  return (
    <ConfirmButton
      label="Revoke"
      name={`Revoke API token ${String(row.name)}`}
      danger
      title={`Revoke API token ${row.id}?`}
      question={`Requests with “${String(row.name)}” are refused from now on. This cannot be undone.${own}`}
      confirmLabel="Revoke API token"
      onConfirm={() => api.remove(row.id).finally(refresh)}
    />
  );
}

/** A secret shown once, with a button that copies it (or says to select it when the browser will not). */
export function CopySecret({ secret, label }: { secret: string; label: string }) {
  const [said, setSaid] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setSaid('Copied.');
    } catch {
      setSaid('This browser did not allow copying: select the text and copy it.');
    }
  };
  return (
    <div className="copy">
      <code className="secret">{secret}</code>
      <button type="button" onClick={() => void copy()}>
        {label}
      </button>
      {said ? <span>{said}</span> : null}
    </div>
  );
}
