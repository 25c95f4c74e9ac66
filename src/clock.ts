/** Milliseconds since the epoch. Injected so tests can move time (points expiry). */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** Times in responses: UTC ISO 8601 with milliseconds. */
export function isoTime(ms: number): string;
export function isoTime(ms: number | null): string | null;
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(Number(ms)).toISOString();
}
