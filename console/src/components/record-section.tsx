import { useQueryClient } from '@tanstack/react-query';
import { useId, useRef, type ReactNode } from 'react';
import { useClient } from '../lib/api';
import { recordApi, useCursorList, type Row } from '../lib/records';
import { QueryError } from './alert';
import { ConfirmButton } from './confirm-button';
import { Pager } from './pager';
import { RecordForm, type FieldSpec } from './record-form';
import { cellClass, ScrollTable, type Column } from './scroll-table';

/** A kind of record as its page shows it: its list, its forms and its actions, described once. */
export interface RecordKind {
  /** The API's path (`/merchant_api/v1/rewards`); its last part keys the queries. */
  path: string;
  /** The page's heading ("Rewards"). */
  title: string;
  /** One record in words ("reward", "VIP tier"). */
  singular: string;
  columns: (Column & { cell: (row: Row) => ReactNode })[];
  /** The create form's fields; none: records are made elsewhere. */
  fields: readonly FieldSpec[];
  /** The edit form's fields; none: not editable. */
  editFields?: readonly FieldSpec[];
  /** How a record goes away ("Delete", "Revoke"), and what that means; none: it stays. */
  remove?: { verb: string; consequence: string };
  /** More actions of a row (Enable, Upload codes, Complete). */
  actions?: (row: Row, refresh: () => Promise<void>) => ReactNode;
  /** What the create's answer shows, once (a webhook's secret). */
  created?: (row: Row) => ReactNode;
  /** What is said when there is none yet. */
  empty: string;
  /** The API answers the list whole, without pagination (API tokens). */
  unpaged?: boolean;
}

/** A row as its buttons name it: its name where it has one ("Tote bag"), else its id. */
const rowName = (row: Row) => (typeof row.name === 'string' && row.name !== '' ? row.name : String(row.id));

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** A kind of record's page: the list in cursor mode, its row actions, and the form that makes one. */
export function RecordSection({ kind, intro }: { kind: RecordKind; intro?: ReactNode }) {
  const client = useClient();
  const queries = useQueryClient();
  const api = recordApi(client, kind.path);
  const key = [kind.path] as const;
  const list = useCursorList(key, (since, signal) => (kind.unpaged ? api.all(signal) : api.page(since, signal)));
  const refresh = () => queries.invalidateQueries({ queryKey: key });
  const rows = list.query.data?.data;
  const actions = Boolean(kind.editFields || kind.remove || kind.actions);
  const columns: Column[] = [...kind.columns, ...(actions ? [{ label: 'Actions' }] : [])];
  const name = capital(kind.singular);
  // A list this token may not read (or that failed) says why, and nothing else: no endless "Loading", no form to fail again.
  if (list.query.error && !rows) {
    return (
      <>
        <h1>{kind.title}</h1>
        <QueryError query={list.query} />
      </>
    );
  }

  return (
    <>
      <h1>{kind.title}</h1>
      {intro}
      <QueryError query={list.query} />
      {!rows ? (
        <p aria-live="polite">Loading {kind.title.toLowerCase()}…</p>
      ) : rows.length === 0 ? (
        <p role="status">{kind.empty}</p>
      ) : (
        <ScrollTable label={kind.title} columns={columns}>
          {rows.map((row) => (
            <tr key={row.id}>
              {kind.columns.map((c) => (
                <td key={c.label} className={cellClass(c)}>
                  {c.cell(row)}
                </td>
              ))}
              {actions ? (
                <td className="actions">
                  {kind.actions?.(row, refresh)}
                  {kind.editFields ? <EditButton kind={kind} row={row} onSaved={refresh} /> : null}
                  {kind.remove ? (
                    <ConfirmButton
                      label={kind.remove.verb}
                      name={`${kind.remove.verb} ${kind.singular} ${rowName(row)}`}
                      danger
                      title={`${kind.remove.verb} ${kind.singular} ${row.id}?`}
                      question={kind.remove.consequence}
                      confirmLabel={`${kind.remove.verb} ${kind.singular}`}
                      onConfirm={() => api.remove(row.id).finally(refresh)}
                    />
                  ) : null}
                </td>
              ) : null}
            </tr>
          ))}
        </ScrollTable>
      )}
      {list.page > 1 || list.more ? <Pager label={`Pages of ${kind.title.toLowerCase()}`} page={list.page} more={list.more} onPage={list.onPage} /> : null}
      {kind.fields.length > 0 ? (
        <section aria-labelledby={`new-${kind.path}`}>
          <h2 id={`new-${kind.path}`}>New {kind.singular}</h2>
          <RecordForm
            label={`New ${kind.singular}`}
            fields={kind.fields}
            submitLabel={`Create ${kind.singular}`}
            onSubmit={async (body, idempotencyKey) => {
              const row = await api.create(body, idempotencyKey).finally(refresh);
              return kind.created?.(row) ?? `${name} ${row.id} created.`;
            }}
          />
        </section>
      ) : null}
    </>
  );
}

/** "Edit": the record's form in a modal dialog; Escape or "Close" leaves it. */
function EditButton({ kind, row, onSaved }: { kind: RecordKind; row: Row; onSaved: () => Promise<void> }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const api = recordApi(useClient(), kind.path);
  return (
    <>
      <button type="button" aria-label={`Edit ${kind.singular} ${rowName(row)}`} onClick={() => dialog.current?.showModal()}>
        Edit
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <h2 id={titleId}>
          Edit {kind.singular} {row.id}
        </h2>
        <RecordForm
          key={JSON.stringify(row)}
          label={`Edit ${kind.singular} ${row.id}`}
          fields={kind.editFields ?? []}
          record={row}
          submitLabel="Save changes"
          onSubmit={async (body, idempotencyKey) => {
            await api.update(row.id, body, idempotencyKey).finally(onSaved);
            dialog.current?.close();
            return 'Saved.';
          }}
        />
        <div className="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Close
          </button>
        </div>
      </dialog>
    </>
  );
}
