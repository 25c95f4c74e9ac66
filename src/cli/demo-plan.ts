import { DAY_MS } from '../clock.js';

// What `loyalty demo` writes, decided before anything is written (demo.ts writes it): the
// programme, and for each customer a day they join, their orders over the days after, whether
// they redeem and whether they take the spring bonus. Deterministic: the same seed every time,
// so the first N customers of any demo are the same N, with the same history.

/** The days of history a demo spreads over, ending now. */
export const HISTORY_DAYS = 90;
/** Customers join over the first days of the history, so every one has some weeks of it. */
const JOIN_DAYS = 60;
/** The spring bonus: points granted on this day of the history, which expire unspent after a few weeks. */
export const BONUS = { day: 20, points: 150, validDays: 21, note: 'Spring bonus: spend it within three weeks' };

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Linus', 'Frances', 'John', 'Katherine', 'Dennis', 'Hedy'];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Perlman',
  'Torvalds',
  'Allen',
  'Backus',
  'Johnson',
  'Ritchie',
  'Lamarr',
];
const STATUSES = ['paid', 'paid', 'paid', 'paid', 'paid', 'partially_refunded', 'refunded', 'pending'] as const;

export const REWARDS = [
  { name: '5 € off your next order', points_price: 500, kind: 'fixed_amount_discount', value: 5 },
  { name: '10% off your next order', points_price: 800, kind: 'percentage_discount', value: 10 },
  { name: 'Free shipping', points_price: 300, kind: 'free_shipping', value: 0 },
  { name: 'Free tote bag', points_price: 1500, kind: 'free_product', value: 12 },
];
export const RULES = [
  { kind: 'signup', points_amount: 100 },
  { kind: 'order', points_per_unit: 1, unit_amount: 1, currency: 'EUR' },
];
/**
 * Thresholds the demo's customers reach: most stay Bronze, some climb to Silver, a few to Gold;
 * the higher tiers earn more on each order, so a shopper sees what a tier is worth.
 */
export const TIERS = [
  { name: 'Bronze', points_threshold: 0, earning_multiplier: 1 },
  { name: 'Silver', points_threshold: 500, earning_multiplier: 1.25 },
  { name: 'Gold', points_threshold: 1200, earning_multiplier: 1.5 },
];

export interface PlannedOrder {
  remoteId: number;
  day: number;
  total: number;
  status: (typeof STATUSES)[number];
}

export interface PlannedCustomer {
  remoteId: number;
  day: number;
  body: { email: string; first_name: string; last_name: string; phone: null; birthday: string };
  orders: PlannedOrder[];
  /** Whether they spend points on a reward when they can, after an order. */
  redeems: boolean;
  /** Whether they are given the spring bonus (when they have joined by its day). */
  bonus: boolean;
}

/** A small deterministic generator, so that two demos of the same size look alike. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SEED = 20_260_115;

/** Customers 1…count with their history; orders are numbered 100 001… in the order of the customers. */
export function demoPlan(count: number): PlannedCustomer[] {
  const rand = random(SEED);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const people: PlannedCustomer[] = [];
  let orderId = 100_000;
  for (let i = 1; i <= count; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const day = Math.floor(rand() * JOIN_DAYS);
    // Few customers order often: the square makes frequent buyers rare, as they are.
    const orders = Array.from({ length: Math.floor(rand() ** 2 * 16) }, () => {
      const status = pick(STATUSES);
      return { remoteId: ++orderId, day: day + Math.floor(rand() * (HISTORY_DAYS - day)), total: Math.round(1500 + rand() * 14_000) / 100, status };
    }).sort((a, b) => a.day - b.day || a.remoteId - b.remoteId);
    people.push({
      remoteId: i,
      day,
      body: {
        email: `${first}.${last}.${i}@example.com`.toLowerCase(),
        first_name: first,
        last_name: last,
        phone: null,
        birthday: `19${60 + Math.floor(rand() * 40)}-0${1 + Math.floor(rand() * 9)}-1${Math.floor(rand() * 9)}`,
      },
      orders,
      redeems: rand() < 0.5,
      bonus: rand() < 0.6,
    });
  }
  return people;
}

/** When a day of the history is, for a history ending at `now`: its morning, plus `minutes`. */
export const dayTime = (now: number, day: number, minutes = 0): number => now - (HISTORY_DAYS - day) * DAY_MS + 9 * 3_600_000 + minutes * 60_000;

/** An order's refund as the platform would report it: 30% of a partially refunded order, all of a refunded one. */
export const refunded = (order: PlannedOrder): number =>
  order.status === 'refunded' ? order.total : order.status === 'partially_refunded' ? Math.floor(order.total * 30) / 100 : 0;
