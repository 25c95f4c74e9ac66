import type { ReactNode } from 'react';

export interface Column {
  label: string;
  numeric?: boolean;
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
              <th key={c.label} scope="col" className={c.numeric ? 'number' : undefined}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
