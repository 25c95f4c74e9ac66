import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/clock.js';
import { draftEvent, MAX_FUTURE_MS, toHundredths, type EventDraft, type ShopRules } from '../../src/ledger/rules.js';
import type { PointsEventInput } from '../../src/ledger/schemas.js';

// The rules of one points event, without a database or a request: each case is one input
// against one shop's settings at a fixed instant.

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const PLAIN: ShopRules = { per_event_expiry: false, points_expiry_days: null };
const PER_EVENT: ShopRules = { per_event_expiry: true, points_expiry_days: null };
const YEARLY: ShopRules = { per_event_expiry: false, points_expiry_days: 365 };

const event = (fields: Partial<PointsEventInput> = {}): PointsEventInput => ({
  customer_identifier: 'ada@example.com',
  source: 'manual',
  points_amount: 100,
  ...fields,
});
const codes = (result: EventDraft | { code: string }[]) => (Array.isArray(result) ? result.map((e) => e.code) : 'draft');

describe('toHundredths', () => {
  it('keeps up to 2 decimals exactly and refuses more', () => {
    expect(toHundredths(19.99)).toBe(1999);
    expect(toHundredths(-5.5)).toBe(-550);
    expect(toHundredths(0)).toBe(0);
    expect(toHundredths(-0)).toBe(0);
    expect(toHundredths(0.1 + 0.2)).toBeNull();
    expect(toHundredths(1.005)).toBeNull();
  });
});

describe('draftEvent', () => {
  it('drafts a grant in storage units, applied now, never expiring by default', () => {
    expect(draftEvent(event({ credits_amount: 2.5, internal_note: 'why' }), PLAIN, NOW)).toEqual({
      customerIdentifier: 'ada@example.com',
      source: 'manual',
      points: 100,
      credits: 250,
      internalNote: 'why',
      externalNote: null,
      customActionName: null,
      appliedAt: NOW,
      expiresAt: null,
    });
  });

  it("gives a grant the shop's expiry, counted from applied_at, and a deduction none", () => {
    const appliedAt = NOW - 10 * DAY_MS;
    const grant = draftEvent(event({ applied_at: new Date(appliedAt).toISOString() }), YEARLY, NOW) as EventDraft;
    expect(grant.appliedAt).toBe(appliedAt);
    expect(grant.expiresAt).toBe(appliedAt + 365 * DAY_MS);
    expect((draftEvent(event({ points_amount: -100 }), YEARLY, NOW) as EventDraft).expiresAt).toBeNull();
  });

  it('reads a blank applied_at as now and refuses one too far in the future', () => {
    expect((draftEvent(event({ applied_at: ' ' }), PLAIN, NOW) as EventDraft).appliedAt).toBe(NOW);
    expect((draftEvent(event({ applied_at: new Date(NOW + MAX_FUTURE_MS).toISOString() }), PLAIN, NOW) as EventDraft).appliedAt).toBe(NOW + MAX_FUTURE_MS);
    expect(codes(draftEvent(event({ applied_at: new Date(NOW + MAX_FUTURE_MS + 1).toISOString() }), PLAIN, NOW))).toEqual(['applied_at_in_future']);
    expect(codes(draftEvent(event({ applied_at: '2026-02-31T00:00:00Z' }), PLAIN, NOW))).toEqual(['invalid_datetime']);
  });

  it('wants a non-zero amount and credits with at most 2 decimals', () => {
    expect(codes(draftEvent(event({ points_amount: 0 }), PLAIN, NOW))).toEqual(['amount_required']);
    expect(codes(draftEvent(event({ points_amount: undefined, credits_amount: 0 }), PLAIN, NOW))).toEqual(['amount_required']);
    expect(codes(draftEvent(event({ credits_amount: 0.001 }), PLAIN, NOW))).toEqual(['invalid_credits_amount']);
  });

  it("wants the action's name for custom_action and an http(s) URL for visit_url", () => {
    expect(codes(draftEvent(event({ source: 'custom_action' }), PLAIN, NOW))).toEqual(['missing']);
    expect(codes(draftEvent(event({ source: 'custom_action', custom_action_name: 'Newsletter' }), PLAIN, NOW))).toBe('draft');
    expect(codes(draftEvent(event({ source: 'visit_url', custom_action_name: 'ftp://example.com' }), PLAIN, NOW))).toEqual(['invalid_url']);
    expect(codes(draftEvent(event({ source: 'visit_url', custom_action_name: ' https://example.com/a ' }), PLAIN, NOW))).toBe('draft');
  });

  it('takes expires_at only from shops with per-event expiry, on grants, after applied_at', () => {
    const later = new Date(NOW + DAY_MS).toISOString();
    expect(codes(draftEvent(event({ expires_at: later }), PLAIN, NOW))).toEqual(['expires_at_not_allowed']);
    expect((draftEvent(event({ expires_at: later }), PER_EVENT, NOW) as EventDraft).expiresAt).toBe(NOW + DAY_MS);
    expect(codes(draftEvent(event({ points_amount: -5, expires_at: later }), PER_EVENT, NOW))).toEqual(['expires_at_on_deduction']);
    expect(codes(draftEvent(event({ expires_at: new Date(NOW).toISOString() }), PER_EVENT, NOW))).toEqual(['expires_at_before_applied_at']);
  });

  it('never reads a field that failed its schema, and drafts nothing then', () => {
    // points_amount failed: whether the event deducts is unknown, so expires_at is not judged.
    const later = new Date(NOW + DAY_MS).toISOString();
    expect(draftEvent(event({ expires_at: later }), PER_EVENT, NOW, new Set(['points_amount']))).toEqual([]);
    // applied_at failed: expires_at is not compared with it, but custom_action_name is still judged.
    expect(codes(draftEvent(event({ source: 'custom_action', expires_at: later }), PER_EVENT, NOW, new Set(['applied_at'])))).toEqual(['missing']);
  });

  it("names the failing field, leaving the event's place in a batch to the caller", () => {
    expect(draftEvent(event({ points_amount: 0 }), PLAIN, NOW)).toEqual([
      { field: 'points_amount', code: 'amount_required', message: 'points_amount or credits_amount must be present and non-zero' },
    ]);
  });
});
