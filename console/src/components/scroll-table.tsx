import type { ReactNode } from 'react';

export interface Column {
  label: string;
  numeric?: boolean;
  /** A column the list sorts by: its header is a button, and says how the list is sorted now. */
  sort?: { direction: 'ascending' | 'descending' | 'none'; onSort: () => void };
}

/**
 * A table in a region that scrolls sideways on a narrow screen; the region is focusable, so
 * the keyboard can scroll it too, and named, so it is found by its name.
 */
export function ScrollTable({ label, columns, children }: { label: string; columns: Column[]; children: ReactNode }) {
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label={label}>
      <table>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.label} scope="col" className={c.numeric ? 'number' : undefined} aria-sort={c.sort?.direction}>
                {c.sort ? (
                  <button type="button" className="sort" onClick={c.sort.onSort}>
                    {c.label}
                  </button>
                ) : (
                  c.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
