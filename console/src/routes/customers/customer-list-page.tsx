import { useState, type FormEvent } from 'react';
import { QueryError } from '../../components/alert';
import { Pager } from '../../components/pager';
import { ScrollTable, type Column } from '../../components/scroll-table';
import { customerName, formatPoints } from '../../lib/format';
import { takeNotice } from '../../lib/notice';
import { customerHref } from '../../lib/router';
import { useCustomers, type Customer, type CustomerQuery, type CustomerSort } from './use-customers';

const SORTS: { value: CustomerSort; label: string }[] = [
  { value: 'id', label: 'Remote ID' },
  { value: 'created_at', label: 'Created' },
  { value: 'updated_at', label: 'Last changed' },
  { value: 'points_balance', label: 'Points balance' },
];

export function CustomerListPage() {
  const [query, setQuery] = useState<CustomerQuery>({ search: '', sort: 'id', direction: 'asc', page: 1 });
  const [search, setSearch] = useState('');
  const [notice] = useState(takeNotice);
  const customers = useCustomers(query);
  const change = (patch: Partial<CustomerQuery>) => setQuery((q) => ({ ...q, page: 1, ...patch }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    change({ search });
  };

  return (
    <>
      <h1>Customers</h1>
      {notice ? <p role="status">{notice}</p> : null}
      <form role="search" aria-label="Customers" className="toolbar" onSubmit={submit}>
        <label htmlFor="customer-search">Search customers</label>
        <input
          id="customer-search"
          type="search"
          placeholder="Name, e-mail or remote_id"
          aria-describedby="customer-search-hint"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
        <button type="submit">Search</button>
        <span id="customer-search-hint" className="hint">
          Finds customers whose first or last name or e-mail starts with each word.
        </span>
      </form>
      <div className="toolbar">
        <label htmlFor="customer-sort">Sort by</label>
        <select id="customer-sort" value={query.sort} onChange={(e) => change({ sort: e.target.value as CustomerSort })}>
          {SORTS.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
        <label htmlFor="customer-direction">Order</label>
        <select id="customer-direction" value={query.direction} onChange={(e) => change({ direction: e.target.value as 'asc' | 'desc' })}>
          <option value="asc">Ascending</option>
          <option value="desc">Descending</option>
        </select>
      </div>
      <QueryError query={customers} what="The customers" />
      {customers.data ? (
        <>
          <p aria-live="polite" className="muted">
            {customers.data.total === 1 ? '1 customer' : `${formatPoints(customers.data.total)} customers`}
          </p>
          <CustomerTable customers={customers.data.customers} columns={columnsFor(query, change)} />
        </>
      ) : customers.error ? null : (
        <p aria-live="polite">Loading customers…</p>
      )}
      <Pager label="Pages of customers" page={query.page} more={customers.data?.more ?? false} onPage={(page) => setQuery((q) => ({ ...q, page }))} />
    </>
  );
}

/** The list's columns; "Points" sorts by balance (ascending first, then the other way). */
function columnsFor(query: CustomerQuery, change: (patch: Partial<CustomerQuery>) => void): Column[] {
  const byBalance = query.sort === 'points_balance';
  const direction = byBalance ? (query.direction === 'asc' ? 'ascending' : 'descending') : 'none';
  const onSort = () => change({ sort: 'points_balance', direction: byBalance && query.direction === 'asc' ? 'desc' : 'asc' });
  return [
    { label: 'Customer' },
    { label: 'E-mail' },
    { label: 'Remote ID' },
    { label: 'Points', numeric: true, sort: { direction, onSort } },
    { label: 'Tier' },
  ];
}

function CustomerTable({ customers, columns }: { customers: Customer[]; columns: Column[] }) {
  if (customers.length === 0) return <p role="status">No customers found.</p>;
  return (
    <ScrollTable label="Customers found" columns={columns}>
      {customers.map((c) => (
        <tr key={c.remote_id}>
          <td>
            <a href={customerHref(c.remote_id)}>{customerName(c)}</a>
          </td>
          <td>{c.email ?? '—'}</td>
          <td>{c.remote_id}</td>
          <td className="number">{formatPoints(c.points_balance)}</td>
          <td>{c.vip_tier?.name ?? '—'}</td>
        </tr>
      ))}
    </ScrollTable>
  );
}
