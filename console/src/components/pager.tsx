/** "Previous page" / "Next page" for an offset-mode list (the API's `links.next` says whether more follow). */
export function Pager({ label, page, more, onPage }: { label: string; page: number; more: boolean; onPage: (page: number) => void }) {
  return (
    <nav aria-label={label} className="pager">
      <button type="button" disabled={page === 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span>Page {page}</span>
      <button type="button" disabled={!more} onClick={() => onPage(page + 1)}>
        Next page
      </button>
    </nav>
  );
}

/** Whether an offset-mode page has a next one. */
export const hasNext = (links: object): boolean => 'next' in links && typeof links.next === 'string';

/** The page number an offset-mode list's `links.last` names (1 when it names none). */
export const lastPage = (links: object): number => {
  const last = 'last' in links && typeof links.last === 'string' ? new URL(links.last).searchParams.get('pagination[page]') : null;
  return last === null ? 1 : Number(last);
};

/**
 * How many records an offset-mode list holds: the pages before the last are full, so the last
 * page's rows finish the count (read only when the page shown is not the last).
 */
export async function offsetTotal(
  shown: { page: number; perPage: number; rows: number; links: object },
  readPage: (page: number) => Promise<number>,
): Promise<number> {
  const last = lastPage(shown.links);
  const onLast = last === shown.page ? shown.rows : await readPage(last);
  return (last - 1) * shown.perPage + onLast;
}
