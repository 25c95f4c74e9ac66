import { useLayoutEffect, useRef, type ReactNode } from 'react';

export interface Column {
  label: string;
  numeric?: boolean;
  /** Its cells are the console's own words (a kind, a status): they wrap between words, never inside one. */
  words?: boolean;
  /** A column the list sorts by: its header is a button, and says how the list is sorted now. */
  sort?: { direction: 'ascending' | 'descending' | 'none'; onSort: () => void };
}

/**
 * A table in a named, focusable region. Its cells wrap, so it fits its area; on a phone each
 * row is a card whose cells are named by their column (`data-label`, set here once the rows
 * are drawn, so no page repeats its column names cell by cell).
 */
/** A cell's class for its column: numbers right-aligned, words kept whole. */
export const cellClass = (c: Column): string | undefined => (c.numeric ? 'number' : c.words ? 'words' : undefined);

export function ScrollTable({ label, columns, children }: { label: string; columns: Column[]; children: ReactNode }) {
  const body = useRef<HTMLTableSectionElement>(null);
  useLayoutEffect(() => {
    for (const row of Array.from(body.current?.rows ?? [])) {
      Array.from(row.cells).forEach((cell, i) => cell.setAttribute('data-label', columns[i]?.label ?? ''));
    }
  });
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
        <tbody ref={body}>{children}</tbody>
      </table>
    </div>
  );
}
