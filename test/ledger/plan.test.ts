import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_BALANCES, type Balances } from '../../src/ledger/balances.js';
import { dayOf } from '../../src/ledger/earned-window.js';
import { NEVER } from '../../src/ledger/lot-queue.js';
import { lotsKey, planPostings, type LedgerPlan, type LotsRead, type PlanInput } from '../../src/ledger/plan.js';
import { posting, type EntryFields, type Posting, type ReversalPlan } from '../../src/ledger/posting.js';
import { deductionReach, lotsToRead } from '../../src/ledger/read.js';

// The ledger's arithmetic without a database (src/ledger/plan.ts): FIFO consumption, reversals
// into the original lots, clawbacks, credits in hundredths; then random postings played
// against an in-memory ledger, batch after batch, keep every invariant `loyalty verify` checks.

const DAY = 86_400_000;
const NOW = 1_000 * DAY;
const WINDOW = { from: 0, earnedSince: new Map<number, number>() };

type Kind = 'points' | 'credits';

const balances = (b: Partial<Omit<Balances, 'stored'>> & { stored?: Partial<Balances['stored']> } = {}): Balances => {
  const points = b.points ?? 0;
  const credits = b.credits ?? 0;
  return { ...NO_BALANCES, ...b, stored: { points, credits, nextExpiry: null, ...b.stored } };
};

const entry = (fields: Partial<EntryFields> & Pick<EntryFields, 'source' | 'points'>): EntryFields => ({ appliedAt: NOW, ...fields });
const to = (remoteId: number, fields: Partial<EntryFields> & Pick<EntryFields, 'source' | 'points'>): Posting =>
  posting({ remoteId, email: null }, entry(fields));

function plan(
  postings: Posting[],
  customers: Map<number, Balances>,
  lots: Record<string, { id: number; remaining: number; key: number }[]> = {},
  now = NOW,
): LedgerPlan {
  const read = new Map<string, LotsRead>(Object.entries(lots).map(([key, list]) => [key, { lots: list, complete: true }]));
  return planPostings({ now, postings, balances: customers, lots: read, window: WINDOW });
}

/** What each consumption took, as [lot, amount]: stored lots by id, fresh ones as `f<event>`. */
const taken = (p: LedgerPlan) => p.consumptions.map((c) => [c.lot.fresh ? `f${c.lot.eventIndex}` : c.lot.id, c.amount]);

describe('planPostings', () => {
  it('deducts first-expiring first, never-expiring last, stored before fresh on equal expiry', () => {
    const customers = new Map([[1, balances({ points: 30, stored: { nextExpiry: { at: NOW + 5 * DAY, points: 10, credits: 0 } } })]]);
    const stored = [
      { id: 11, remaining: 10, key: NOW + 5 * DAY },
      { id: 12, remaining: 10, key: NOW + 9 * DAY },
      { id: 13, remaining: 10, key: NEVER },
    ];
    const p = plan(
      [
        to(1, { source: 'order', points: 10, expiresAt: NOW + 9 * DAY }),
        to(1, { source: 'order', points: 10, expiresAt: NOW + 2 * DAY }),
        to(1, { source: 'refund', points: -35 }),
      ],
      customers,
      { [lotsKey(1, 'points')]: stored },
    );
    expect(p.failures).toEqual([]);
    expect(taken(p)).toEqual([
      ['f1', 10],
      [11, 10],
      [12, 10],
      ['f0', 5],
    ]);
    expect(p.events.map((e) => e.pointsBalance)).toEqual([40, 50, 15]);
    expect(p.storedLots.map((l) => [l.id, l.remaining])).toEqual([
      [11, 0],
      [12, 0],
    ]);
    const [c] = p.customers;
    expect([c!.storedPoints, c!.spent, c!.earned]).toEqual([15, 35, 20]);
    // The earliest stored lots were emptied: what expires next is read again after the write.
    expect(c!.storedNext).toBeUndefined();
  });

  it('refuses a deduction the balance cannot cover, and plans nothing to write', () => {
    const customers = new Map([[1, balances({ points: 5, credits: 120 })]]);
    const p = plan([to(1, { source: 'order', points: 3 }), to(1, { source: 'refund', points: -9, credits: -121 })], customers, {
      [lotsKey(1, 'points')]: [],
      [lotsKey(1, 'credits')]: [],
    });
    expect(p.failures).toEqual([
      { index: 1, field: 'points_amount', code: 'insufficient_balance', message: 'The customer has 8 points available; cannot deduct 9' },
      { index: 1, field: 'credits_amount', code: 'insufficient_balance', message: 'The customer has 1.20 credits available; cannot deduct 1.21' },
    ]);
    expect([p.events, p.consumptions, p.lots]).toEqual([[], [], []]);
  });

  it('counts credits to the hundredth: a hundred grants of 0.01 cover exactly 1.00', () => {
    const customers = new Map([[1, balances()]]);
    const grants = Array.from({ length: 100 }, () => to(1, { source: 'order', points: 0, credits: 1 }));
    const p = plan([...grants, to(1, { source: 'refund', points: 0, credits: -100 })], customers);
    expect(p.failures).toEqual([]);
    expect(p.customers[0]!.credits).toBe(0);
    expect(p.consumptions).toHaveLength(100);
    expect(plan([...grants, to(1, { source: 'refund', points: 0, credits: -101 })], customers).failures[0]!.message).toBe(
      'The customer has 1.00 credits available; cannot deduct 1.01',
    );
  });

  it('takes a clawback off the points earned, on the day they were earned, never off what is not there', () => {
    const earnedAt = NOW - 3 * DAY;
    const customers = new Map([[1, balances({ points: 10, earnedLifetime: 10, earnedWindow: 10 })]]);
    const read = { [lotsKey(1, 'points')]: [{ id: 4, remaining: 10, key: NEVER }] };
    const p = plan([to(1, { source: 'refund', points: -4, clawback: true, earnedAt, orderRemoteId: 9 })], customers, read);
    const c = p.customers[0]!;
    expect([c.points, c.earned, c.spent, c.window]).toEqual([6, 6, 0, 6]);
    expect([...c.earnedDays]).toEqual([[dayOf(earnedAt), -4]]);
    expect(plan([to(1, { source: 'refund', points: -11, clawback: true })], customers, read).failures).toHaveLength(1);
  });

  it('gives a reversed deduction back to the very lots it took from, and takes a reversed grant from its own lot first', () => {
    const customers = new Map([[1, balances({ points: 12, spentLifetime: 8, earnedLifetime: 20 })]]);
    const back: ReversalPlan = {
      restores: [
        { lot: { id: 1, kind: 'points', remaining: 0, key: NOW + DAY }, amount: 5 },
        { lot: { id: 2, kind: 'points', remaining: 7, key: NEVER }, amount: 3 },
      ],
      own: [],
    };
    const undo = plan([{ ...to(1, { source: 'reversal', points: 8, reversesEventId: 30 }), reversal: back }], customers);
    expect(taken(undo)).toEqual([
      [1, -5],
      [2, -3],
    ]);
    expect(undo.storedLots.map((l) => [l.id, l.remaining])).toEqual([
      [1, 5],
      [2, 10],
    ]);
    expect([undo.customers[0]!.points, undo.customers[0]!.spent]).toEqual([20, 0]);

    const own: ReversalPlan = { restores: [], own: [{ id: 3, kind: 'points', remaining: 4, key: NEVER }] };
    const fifo = {
      [lotsKey(1, 'points')]: [
        { id: 2, remaining: 7, key: NOW + DAY },
        { id: 3, remaining: 4, key: NEVER },
      ],
    };
    const grant = plan([{ ...to(1, { source: 'reversal', points: -6, reversesEventId: 31, earnedAt: NOW - DAY }), reversal: own }], customers, fifo);
    expect(taken(grant)).toEqual([
      [3, 4],
      [2, 2],
    ]);
    expect([grant.customers[0]!.points, grant.customers[0]!.earned]).toEqual([6, 14]);
  });

  it('judges only when given no lots: failures and balances, nothing to write', () => {
    const customers = new Map([[1, balances({ points: 5 })]]);
    const judged = planPostings({ now: NOW, postings: [to(1, { source: 'refund', points: -5 })], balances: customers, lots: null, window: WINDOW });
    expect([judged.failures, judged.events, judged.customers[0]!.points]).toEqual([[], [], 0]);
  });

  it('sums the earned window from its first day, from what was earned since when the window moved on', () => {
    const customers = new Map([[1, balances({ earnedLifetime: 500, earnedWindow: 300, windowFrom: 10 })]]);
    const from = dayOf(NOW) - 30;
    const p = planPostings({
      now: NOW,
      postings: [to(1, { source: 'order', points: 50 }), to(1, { source: 'order', points: 20, appliedAt: (from - 1) * DAY })],
      balances: customers,
      lots: new Map(),
      window: { from, earnedSince: new Map([[1, 120]]) },
    });
    expect([p.customers[0]!.window, p.customers[0]!.windowFrom, p.customers[0]!.earned]).toEqual([170, from, 570]);
  });

  it('reads stored lots only as far as the deductions reach', () => {
    const customers = new Map([
      [1, balances({ points: 100, credits: 50 })],
      [2, balances({ points: 0 })],
    ]);
    const reach = deductionReach(
      [to(1, { source: 'refund', points: -12 }), to(1, { source: 'refund', points: -3 }), to(2, { source: 'refund', points: -1 })],
      customers,
    );
    expect([...reach.values()]).toEqual([{ remoteId: 1, kind: 'points', amount: 15 }]);
    expect(lotsToRead(reach, new Map(), NOW)).toEqual([{ key: '1:points', remoteId: 1, kind: 'points', afterKey: NOW, afterId: NEVER }]);
    const some = { lots: [{ id: 5, remaining: 10, key: NOW + DAY }], complete: false };
    expect(lotsToRead(reach, new Map([['1:points', some]]), NOW)).toEqual([{ key: '1:points', remoteId: 1, kind: 'points', afterKey: NOW + DAY, afterId: 5 }]);
    const enough = { lots: [...some.lots, { id: 6, remaining: 5, key: NOW + DAY }], complete: false };
    expect(lotsToRead(reach, new Map([['1:points', enough]]), NOW)).toEqual([]);
  });
});

// An in-memory ledger the plans are written to, as write.ts writes them to the database.

interface MemLot {
  id: number;
  customer: number;
  kind: Kind;
  amount: number;
  remaining: number;
  key: number;
  eventId: number;
}

interface MemEvent {
  id: number;
  customer: number;
  source: string;
  points: number;
  credits: number;
  appliedAt: number;
  earnedAt: number;
  clawback: boolean;
  reverses: number | null;
}

class Ledger {
  lots: MemLot[] = [];
  events: MemEvent[] = [];
  consumptions: { eventId: number; lotId: number; amount: number }[] = [];
  customers = new Map<number, Balances>();
  days = new Map<string, number>();
  reversed = new Set<number>();

  constructor(ids: number[]) {
    for (const id of ids) this.customers.set(id, balances());
  }

  /** The customers' balances at `now`, as lockBalances reads them. */
  read(now: number): Map<number, Balances> {
    const out = new Map<number, Balances>();
    for (const [id, stored] of this.customers) {
      const live = (kind: Kind) => this.lots.filter((l) => l.customer === id && l.kind === kind && l.key > now).reduce((s, l) => s + l.remaining, 0);
      const held = this.lots.filter((l) => l.customer === id && l.remaining > 0 && l.key !== NEVER);
      const at = Math.min(...held.map((l) => l.key));
      const next =
        held.length === 0
          ? null
          : {
              at,
              points: held.filter((l) => l.key === at && l.kind === 'points').reduce((s, l) => s + l.remaining, 0),
              credits: held.filter((l) => l.key === at && l.kind === 'credits').reduce((s, l) => s + l.remaining, 0),
            };
      out.set(id, { ...stored, points: live('points'), credits: live('credits'), stored: { ...stored.stored, nextExpiry: next } });
    }
    return out;
  }

  /** The open lots read.ts would read: FIFO order, unexpired, as far as the deductions reach. */
  lotsFor(postings: readonly Posting[], read: Map<number, Balances>, now: number): Map<string, LotsRead> {
    const reach = deductionReach(postings, read);
    const out = new Map<string, { lots: { id: number; remaining: number; key: number }[]; complete: boolean }>();
    for (let cursors = lotsToRead(reach, out, now), limit = 2; cursors.length > 0; cursors = lotsToRead(reach, out, now)) {
      for (const c of cursors) {
        const open = this.lots
          .filter(
            (l) => l.customer === c.remoteId && l.kind === c.kind && l.remaining > 0 && (l.key > c.afterKey || (l.key === c.afterKey && l.id > c.afterId)),
          )
          .sort((a, b) => a.key - b.key || a.id - b.id)
          .slice(0, limit);
        const sofar = out.get(c.key) ?? { lots: [], complete: false };
        sofar.lots.push(...open.map((l) => ({ id: l.id, remaining: l.remaining, key: l.key })));
        sofar.complete = open.length < limit;
        out.set(c.key, sofar);
      }
    }
    return out;
  }

  write(p: LedgerPlan): void {
    for (const l of p.storedLots) this.lots.find((m) => m.id === l.id)!.remaining = l.remaining;
    const eventIds = p.events.map((_, i) => this.events.length + 1 + i);
    p.events.forEach(({ posting: { customer, entry } }, i) =>
      this.events.push({
        id: eventIds[i]!,
        customer: customer.remoteId,
        source: entry.source,
        points: entry.points,
        credits: entry.credits,
        appliedAt: entry.appliedAt,
        earnedAt: entry.earnedAt ?? entry.appliedAt,
        clawback: entry.clawback === true,
        reverses: entry.reversesEventId ?? null,
      }),
    );
    for (const { lot, kind, remoteId } of p.lots) {
      lot.id = this.lots.length + 1;
      this.lots.push({ id: lot.id, customer: remoteId, kind, amount: lot.amount, remaining: lot.remaining, key: lot.key, eventId: eventIds[lot.eventIndex]! });
    }
    for (const c of p.consumptions) this.consumptions.push({ eventId: eventIds[c.eventIndex]!, lotId: c.lot.id, amount: c.amount });
    for (const c of p.customers) {
      for (const [day, points] of c.earnedDays) this.days.set(`${c.remoteId}:${day}`, (this.days.get(`${c.remoteId}:${day}`) ?? 0) + points);
      const stored = { points: c.storedPoints, credits: c.storedCredits, nextExpiry: null };
      this.customers.set(c.remoteId, {
        ...c.before,
        points: c.points,
        credits: c.credits,
        earnedLifetime: c.earned,
        spentLifetime: c.spent,
        earnedWindow: c.window,
        windowFrom: c.windowFrom,
        pending: c.pending,
        stored,
      });
    }
    for (const e of p.events) if (e.posting.entry.reversesEventId) this.reversed.add(e.posting.entry.reversesEventId);
  }

  /** How a reversal of the event moves lots, as reverse.ts reads it. */
  reversalOf(eventId: number): ReversalPlan {
    const ref = (l: MemLot) => ({ id: l.id, kind: l.kind, remaining: l.remaining, key: l.key });
    return {
      restores: this.consumptions.filter((c) => c.eventId === eventId).map((c) => ({ lot: ref(this.lots.find((l) => l.id === c.lotId)!), amount: c.amount })),
      own: this.lots.filter((l) => l.eventId === eventId).map(ref),
    };
  }

  /** Every invariant `loyalty verify` checks (src/ledger/verify.ts), as broken ones. */
  broken(): string[] {
    const out: string[] = [];
    const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
    for (const [id, c] of this.customers) {
      const mine = this.events.filter((e) => e.customer === id);
      const lots = (kind: Kind) => sum(this.lots.filter((l) => l.customer === id && l.kind === kind).map((l) => l.remaining));
      if (c.stored.points !== sum(mine.map((e) => e.points))) out.push(`customer ${id}: points_balance = the sum of events`);
      if (c.stored.credits !== sum(mine.map((e) => e.credits))) out.push(`customer ${id}: credits_balance = the sum of events`);
      if (c.stored.points !== lots('points')) out.push(`customer ${id}: points_balance = its lots`);
      if (c.stored.credits !== lots('credits')) out.push(`customer ${id}: credits_balance = its lots`);
      const earning = mine.filter((e) => (e.points > 0 && e.source !== 'reversal') || (e.points < 0 && (e.source === 'reversal' || e.clawback)));
      if (c.earnedLifetime !== sum(earning.map((e) => e.points))) out.push(`customer ${id}: points_earned_lifetime`);
      const spending = mine.filter((e) => (e.points < 0 && e.source !== 'reversal' && !e.clawback) || (e.points > 0 && e.source === 'reversal'));
      if (c.spentLifetime !== -sum(spending.map((e) => e.points))) out.push(`customer ${id}: points_spent_lifetime`);
      const days = sum([...this.days].filter(([k]) => k.startsWith(`${id}:`)).map(([, v]) => v));
      if (days !== c.earnedLifetime || c.earnedWindow !== c.earnedLifetime) out.push(`customer ${id}: earned days and window`);
      if (c.stored.points < 0 || c.stored.credits < 0 || c.earnedLifetime < 0 || c.spentLifetime < 0) out.push(`customer ${id}: not negative`);
    }
    for (const l of this.lots) {
      const consumed = sum(this.consumptions.filter((c) => c.lotId === l.id).map((c) => c.amount));
      if (l.remaining !== l.amount - consumed) out.push(`lot ${l.id}: remaining = amount less consumptions`);
      if (l.amount <= 0 || l.remaining < 0 || l.remaining > l.amount) out.push(`lot ${l.id}: 0 <= remaining <= amount`);
    }
    for (const c of this.consumptions) {
      const source = this.events.find((e) => e.id === c.eventId)!.source;
      if (c.amount === 0 || (c.amount < 0 && source !== 'reversal')) out.push(`consumption of lot ${c.lotId} by event ${c.eventId}`);
    }
    for (const e of this.events) {
      for (const kind of ['points', 'credits'] as const) {
        const granted = sum(this.lots.filter((l) => l.eventId === e.id && l.kind === kind).map((l) => l.amount));
        const took = sum(this.consumptions.filter((c) => c.eventId === e.id && this.lots.find((l) => l.id === c.lotId)!.kind === kind).map((c) => c.amount));
        if (e[kind] !== granted - took) out.push(`event ${e.id}: ${kind} = its lots less what it took`);
      }
    }
    return out;
  }
}

/** One random posting: a grant (maybe expiring), a spend, a clawback, or a reversal of an earlier event. */
const step = fc.record({
  customer: fc.integer({ min: 1, max: 3 }),
  what: fc.constantFrom('grant', 'grant', 'spend', 'clawback', 'reverse'),
  points: fc.integer({ min: 0, max: 40 }),
  credits: fc.integer({ min: 0, max: 400 }),
  expiresInDays: fc.option(fc.integer({ min: 1, max: 20 })),
  pick: fc.nat(),
});
const batches = fc.array(fc.record({ advanceDays: fc.integer({ min: 0, max: 6 }), steps: fc.array(step, { minLength: 1, maxLength: 8 }) }), {
  minLength: 1,
  maxLength: 12,
});

describe('planPostings, played at random against an in-memory ledger', () => {
  it('keeps every invariant loyalty verify checks, and writes nothing for a failing batch', () => {
    fc.assert(
      fc.property(batches, (script) => {
        const ledger = new Ledger([1, 2, 3]);
        let now = NOW;
        for (const batch of script) {
          now += batch.advanceDays * DAY;
          const postings: Posting[] = [];
          for (const s of batch.steps) {
            if (s.what === 'reverse') {
              // Reversals and clawbacks (an order's) are not reversible (reverse.ts).
              const open = ledger.events.filter((e) => e.source !== 'reversal' && !e.clawback && !ledger.reversed.has(e.id));
              const target = open[s.pick % Math.max(1, open.length)];
              if (target === undefined || postings.length > 0) continue;
              const undo = to(target.customer, {
                source: 'reversal',
                points: -target.points,
                credits: -target.credits,
                appliedAt: now,
                earnedAt: target.appliedAt,
                reversesEventId: target.id,
              });
              postings.push({ ...undo, reversal: ledger.reversalOf(target.id) });
              break;
            }
            if (postings.some((p) => p.reversal)) break;
            const sign = s.what === 'grant' ? 1 : -1;
            if (s.points === 0 && s.credits === 0) continue;
            const expiresAt = s.what === 'grant' && s.expiresInDays !== null ? now + s.expiresInDays * DAY : null;
            postings.push(
              to(s.customer, {
                source: s.what === 'grant' ? 'order' : 'refund',
                points: sign * s.points,
                credits: sign * s.credits,
                appliedAt: now,
                expiresAt,
                clawback: s.what === 'clawback',
              }),
            );
          }
          if (postings.length === 0) continue;
          const read = ledger.read(now);
          const input: PlanInput = { now, postings, balances: read, lots: null, window: WINDOW };
          const judged = planPostings(input);
          const planned = planPostings({ ...input, lots: ledger.lotsFor(postings, read, now) });
          expect(planned.failures).toEqual(judged.failures);
          if (planned.failures.length > 0) {
            expect([planned.events, planned.lots, planned.consumptions]).toEqual([[], [], []]);
            continue;
          }
          for (const c of planned.customers) expect(c.points >= 0 && c.credits >= 0).toBe(true);
          ledger.write(planned);
          expect(ledger.broken()).toEqual([]);
        }
      }),
      { numRuns: 200 },
    );
  });
});
