// The panel's ways to earn (docs/earning.md, "Ways to earn"): each with what it gives, a "Claim"
// button (or "Visit", which opens the page and then claims) while the shopper may and can, and
// what is done. Every word a shopper reads here is in WORDS, for translation.

export const WORDS = {
  claim: 'Claim',
  visit: 'Visit',
  claiming: 'Claiming…',
  claimLabel: (name: string) => `Claim: ${name}`,
  visitLabel: (name: string) => `Visit: ${name}`,
  done: 'Done',
  doneOf: (done: number, limit: number) => `done ${done} of ${limit}`,
  again: (day: string) => `again from ${day}`,
  credit: (amount: string) => `${amount} in store credit`,
  errors: {
    limit_reached: 'You have already done this as often as it allows for now.',
    rule_not_found: 'This way to earn is not available any more.',
  } as Record<string, string>,
};

export interface MyWay {
  id: number;
  kind: string;
  name: string;
  description: string | null;
  url: string | null;
  points_amount: number;
  credits_amount: number;
  claimable: boolean;
  completed: number;
  limit_count: number;
  available: boolean;
  available_at: string | null;
}

type Text = (value: unknown) => string;

/** What a way gives and where the shopper is with it, in words. */
function status(way: MyWay, points: (n: number) => string, day: (iso: string) => string, number: (n: number) => string): string {
  const gives = [way.points_amount > 0 ? points(way.points_amount) : '', way.credits_amount > 0 ? WORDS.credit(number(way.credits_amount)) : '']
    .filter(Boolean)
    .join(' + ');
  if (!way.available) return `${gives} · ${WORDS.done}${way.available_at === null ? '' : `, ${WORDS.again(day(way.available_at))}`}`;
  return way.completed > 0 ? `${gives} · ${WORDS.doneOf(way.completed, way.limit_count)}` : gives;
}

/** The list items of the shopper's ways to earn; `busy` is the one being claimed. */
export function wayItems(
  ways: readonly MyWay[],
  busy: number | null,
  f: { esc: Text; points: (n: number) => string; day: (iso: string) => string; number: (n: number) => string },
): string[] {
  return ways.map((way) => {
    const title = f.esc(way.description ?? way.name);
    const visit = way.kind === 'visit_url' && way.url !== null;
    const button =
      way.claimable && way.available
        ? `<button part="claim-button" data-claim="${way.id}"${visit ? ` data-url="${f.esc(way.url)}"` : ''} aria-label="${visit ? WORDS.visitLabel(title) : WORDS.claimLabel(title)}" ${busy === null ? '' : 'disabled'}>${busy === way.id ? WORDS.claiming : visit ? WORDS.visit : WORDS.claim}</button>`
        : way.available
          ? ''
          : `<span part="way-done" aria-hidden="true">✓</span>`;
    return `<span><strong>${title}</strong><br><span class="muted">${status(way, f.points, f.day, f.number)}</span></span>${button}`;
  });
}
