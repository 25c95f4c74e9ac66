import { LoyaltyApiError, type components, type operations } from '@loyalty-api/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ErrorAlert, QueryError } from '../../components/alert';
import { SelectField } from '../../components/choice-field';
import { Field } from '../../components/field';
import { hasNext, Pager } from '../../components/pager';
import { ScrollTable, type Column } from '../../components/scroll-table';
import { useClient } from '../../lib/api';
import { fieldErrors } from '../../lib/errors';
import { formatTime } from '../../lib/format';
import { EVENT_SOURCES, labelOf, REDEMPTION_STATUSES, REWARD_KINDS, RULE_KINDS, words } from '../../lib/labels';
import { PAGE_SIZE } from '../../lib/records';

// The audit log (docs/access.md): one entry per write, newest first (the
// list's offset mode sorted by id, descending), filtered as GET /audit_events filters.

type AuditEvent = components['schemas']['AuditEvent'];
type AuditQuery = NonNullable<operations['getAuditEvents']['parameters']['query']>;

/** The filters as typed: the form's fields, sent once "Apply filters" is pressed. */
interface Filters {
  resource: string;
  resource_id: string;
  actor_token_id: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { resource: '', resource_id: '', actor_token_id: '', from: '', to: '' };
const DAY_MS = 86_400_000;

/** The list's query for the filters: the days are UTC, "To" takes its whole day. */
function queryOf(filters: Filters, page: number): AuditQuery {
  const query: AuditQuery = { 'pagination[page]': page, 'pagination[per_page]': PAGE_SIZE, 'sort[order_direction]': 'desc' };
  if (filters.resource.trim()) query.resource = filters.resource.trim();
  if (filters.resource_id.trim()) query.resource_id = filters.resource_id.trim();
  if (filters.actor_token_id) query.actor_token_id = Number(filters.actor_token_id);
  if (filters.from) query['occurred_at[gte]'] = `${filters.from}T00:00:00Z`;
  if (filters.to) query['occurred_at[lt]'] = new Date(Date.parse(`${filters.to}T00:00:00Z`) + DAY_MS).toISOString();
  return query;
}

const COLUMNS: Column[] = [{ label: 'When' }, { label: 'Who' }, { label: 'Action' }, { label: 'Record' }, { label: 'Changes' }, { label: 'Request' }];

function who(actor: AuditEvent['actor']): string {
  if (actor.type === 'cli') return 'The loyalty command (CLI)';
  if (actor.type === 'system') return 'The server';
  return `${actor.name ?? 'API token'} (token ${actor.token_id ?? '?'})`;
}

/** The words for the API's values of a field, where it has a table of them. */
const VALUE_WORDS: Record<string, Readonly<Record<string, string>>> = {
  source: EVENT_SOURCES,
  status: REDEMPTION_STATUSES,
  'reward.kind': REWARD_KINDS,
  'earning_rule.kind': RULE_KINDS,
};

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/**
 * A value of a change, in words: none (also an empty list), a code name in words, yes or no, a
 * time as the console shows times, a customer by name or id, a list of texts or numbers one
 * after the other, text as it is, anything else as JSON; long ones cut.
 */
function shown(value: unknown, resource = '', field = ''): string {
  if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) return 'none';
  const table = VALUE_WORDS[`${resource}.${field}`] ?? VALUE_WORDS[field];
  if (table && typeof value === 'string') return labelOf(table, value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' && ISO_TIME.test(value)) return formatTime(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) return cut(value.join(', '));
  if (typeof value === 'object' && 'remote_id' in value)
    return `customer ${String(value.remote_id)}${'email' in value && value.email ? ` (${String(value.email)})` : ''}`;
  return cut(typeof value === 'string' ? value : JSON.stringify(value));
}

const cut = (text: string) => (text.length > 120 ? `${text.slice(0, 119)}…` : text);

/** What a write changed: a creation as the values it set, an update field by field (before → after). */
function Changes({ resource, action, changes }: { resource: string; action: string; changes: AuditEvent['changes'] }) {
  const fields = Object.entries(changes);
  if (fields.length === 0) return <span className="muted">no field changed</span>;
  const created = action.endsWith('.created') || fields.every(([, [before]]) => before === null || before === undefined);
  return (
    <>
      {created && action.endsWith('.created') ? <span className="line">Created with:</span> : null}
      <ul className="changes">
        {fields.map(([field, [before, after]]) => (
          <li key={field}>
            {words(field)}: {created ? shown(after, resource, field) : `${shown(before, resource, field)} → ${shown(after, resource, field)}`}
          </li>
        ))}
      </ul>
    </>
  );
}

export function AuditLogPage() {
  const client = useClient();
  const [typed, setTyped] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState(1);
  const entries = useQuery({
    queryKey: ['/merchant_api/v1/audit_events', filters, page],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => client.GET('/merchant_api/v1/audit_events', { params: { query: queryOf(filters, page) }, signal }),
  });
  const apply = (next: Filters) => {
    setFilters(next);
    setPage(1);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    apply(typed);
  };
  const rows = entries.data?.data;
  // A refused filter is said beside its field; any other failure with "Retry".
  const filterError = entries.error instanceof LoyaltyApiError && entries.error.details.length > 0 ? entries.error : null;
  return (
    <>
      <h1>Audit log</h1>
      <p className="hint">Every write through the API, the console and the command line, newest first. Times are UTC.</p>
      <FilterForm typed={typed} onType={setTyped} onSubmit={submit} error={filterError} onClear={() => (setTyped(NO_FILTERS), apply(NO_FILTERS))} />
      {!rows ? (
        entries.error && !filterError ? (
          <QueryError query={entries} what="The audit log" />
        ) : (
          <p aria-live="polite">Loading the audit log…</p>
        )
      ) : rows.length === 0 ? (
        <p role="status">{filters === NO_FILTERS ? 'No entries yet.' : 'No entries match these filters.'}</p>
      ) : (
        <ScrollTable label="Audit log entries" columns={COLUMNS}>
          {rows.map((e) => (
            <tr key={e.id}>
              <td>{formatTime(e.occurred_at)}</td>
              <td>{who(e.actor)}</td>
              <td>{words(e.action)}</td>
              <td>{e.resource_id === null ? words(e.resource) : `${words(e.resource)} ${e.resource_id}`}</td>
              <td className="wrap">
                <Changes resource={e.resource} action={e.action} changes={e.changes} />
              </td>
              <td>{e.request_id ? <code>{e.request_id}</code> : '—'}</td>
            </tr>
          ))}
        </ScrollTable>
      )}
      <Pager label="Pages of the audit log" page={page} more={entries.data ? hasNext(entries.data.links) : false} onPage={setPage} />
    </>
  );
}

interface FilterFormProps {
  typed: Filters;
  onType: (filters: Filters) => void;
  onSubmit: (event: FormEvent) => void;
  onClear: () => void;
  error: unknown;
}

/** The filters: a kind of record and its id, the token that wrote, and UTC days. */
function FilterForm({ typed, onType, onSubmit, onClear, error }: FilterFormProps) {
  const client = useClient();
  // Tokens by name for the "Token" filter; the page needs admin, and so do they.
  const tokens = useQuery({
    queryKey: ['/merchant_api/v1/api_tokens', 'filter'],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/api_tokens', { signal })).data,
  });
  const errors = fieldErrors(error, ['resource', 'resource_id', 'actor_token_id', 'occurred_at']);
  const set = (name: keyof Filters) => (e: { target: { value: string } }) => onType({ ...typed, [name]: e.target.value });
  const options = [{ value: '', label: 'Any' }, ...(tokens.data ?? []).map((t) => ({ value: String(t.id), label: `${t.name} (${t.id})` }))];
  return (
    <form aria-label="Audit log filters" className="record-form" onSubmit={onSubmit} noValidate>
      <div className="form-grid">
        <Field
          label="Resource"
          placeholder="earning_rule"
          autoComplete="off"
          value={typed.resource}
          onChange={set('resource')}
          error={errors.byField.resource}
        />
        <Field label="Record ID" autoComplete="off" value={typed.resource_id} onChange={set('resource_id')} error={errors.byField.resource_id} />
        <SelectField label="Token" options={options} value={typed.actor_token_id} onChange={set('actor_token_id')} error={errors.byField.actor_token_id} />
        <Field label="From (UTC day)" type="date" value={typed.from} onChange={set('from')} error={errors.byField.occurred_at} />
        <Field label="To (UTC day)" type="date" value={typed.to} onChange={set('to')} />
      </div>
      <ErrorAlert message={errors.rest} />
      <div className="copy">
        <button type="submit">Apply filters</button>
        <button type="button" onClick={onClear}>
          Clear filters
        </button>
      </div>
    </form>
  );
}
