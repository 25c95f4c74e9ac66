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
