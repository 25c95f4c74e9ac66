import { toFieldErrors } from '../core/validation.js';
import type { DB } from '../db/tables.js';
import { AppError } from '../errors.js';
import { redactCustomer } from '../customers/redact.js';
import { findRecord } from '../records/repository.js';
import { derive, recordJson, type Resource, type Row } from '../records/resource.js';
import { customers } from '../records/resources/customers.js';
import { orders } from '../records/resources/orders.js';
import { checkedBody, replaceRecord, type Writer } from '../records/write.js';
import type { CustomerIntent, Intent, OrderIntent } from './intents.js';
import { claimSource, eraseBodiesOf, recordRefund, refundedOf, resolveDeferred, setConnectionStatus, sourceOf, type Outcome } from './repository.js';

// What a delivery writes, in the caller's transaction, through the very code of PUT /customers
// and PUT /orders (records/write.ts): it earns, claws back, re-tiers, completes referrals, marks
// discount codes and announces webhooks exactly as those calls would.

const none = { resource: null, resourceId: null, customerRemoteId: null } as const;
const outcome = (status: string, error: string | null = null, wrote: Partial<Outcome> = {}): Outcome => ({ status, error, ...none, ...wrote });

/** PUT /{path}/{remoteId} with this body, as the route runs it. */
async function put(trx: DB, w: Writer, r: Resource, remoteId: number, body: Row): Promise<void> {
  const d = derive(r);
  const schemaErrors = d.validateInput(body) ? [] : toFieldErrors(d.validateInput.errors ?? []);
  await replaceRecord(trx, w, r, remoteId, checkedBody(r, body, schemaErrors, true));
}

/** The body of a PUT that writes `fields` over the stored record: what the platform does not send stays. */
async function mergedBody(trx: DB, shopId: number, r: Resource, remoteId: number, fields: Row): Promise<{ body: Row; existed: boolean }> {
  const row = await findRecord(trx, shopId, r, remoteId);
  const stored = row === undefined ? {} : recordJson(r, row);
  const body: Row = {};
  for (const [name, field] of Object.entries(r.fields)) if (!field.readOnly && field.kind !== 'secret' && name in stored) body[name] = stored[name];
  return { body: { ...body, ...fields }, existed: row !== undefined };
}

/** Writes the customer unless what is kept of it is as new or newer; returns whether it wrote. */
async function applyCustomer(trx: DB, w: Writer, c: CustomerIntent): Promise<boolean> {
  const fields: Row = { email: c.email, first_name: c.first_name, last_name: c.last_name, ...(c.phone === undefined ? {} : { phone: c.phone }) };
  // A customer as new as the one applied is the same customer: an order's copy of it writes nothing again.
  if (c.updatedAt !== null && !(await claimSource(trx, w.shopId, 'customer', c.remoteId, c.updatedAt, null, true))) return false;
  const { body, existed } = await mergedBody(trx, w.shopId, customers, c.remoteId, fields);
  if (c.onlyCreate && existed) return false;
  await put(trx, w, customers, c.remoteId, body);
  return true;
}

/** The order's PUT body: total_refunded is the larger of its own figure and its recorded refunds. */
async function orderBody(trx: DB, shopId: number, o: OrderIntent): Promise<Row> {
  const refunded = Math.min(Math.max(o.ownRefunded, await refundedOf(trx, shopId, o.remoteId)), o.total);
  return {
    customer_remote_id: o.customer?.remoteId ?? null,
    total: o.total / 100,
    currency: o.currency,
    financial_status: o.financial_status,
    total_refunded: refunded / 100,
    discount_codes: o.discount_codes,
    placed_at: o.placed_at,
  };
}

async function applyOrder(trx: DB, w: Writer, o: OrderIntent): Promise<Outcome> {
  const wrote = { resource: 'order', resourceId: o.remoteId, customerRemoteId: o.customer?.remoteId ?? null } as const;
  if (o.updatedAt !== null && !(await claimSource(trx, w.shopId, 'order', o.remoteId, o.updatedAt, o.ownRefunded)))
    return outcome('stale', 'a newer payload of this order was applied', wrote);
  if (o.updatedAt === null) await claimSource(trx, w.shopId, 'order', o.remoteId, 0, o.ownRefunded);
  if (o.customer !== null) await applyCustomer(trx, w, o.customer);
  await put(trx, w, orders, o.remoteId, await orderBody(trx, w.shopId, o));
  await resolveDeferred(trx, w.shopId, o.remoteId, w.now);
  return outcome('applied', null, wrote);
}

/** A stored order written again with `change`, its recorded refunds counted; undefined when there is no such order. */
async function rewriteOrder(trx: DB, w: Writer, remoteId: number, change: (body: Row) => Row): Promise<Row | undefined> {
  const row = await findRecord(trx, w.shopId, orders, remoteId);
  if (row === undefined) return undefined;
  const stored = recordJson(orders, row);
  const source = await sourceOf(trx, w.shopId, 'order', remoteId);
  const total = Math.round(Number(stored.total) * 100);
  const own = source?.own_refunded === null || source === undefined ? Math.round(Number(stored.total_refunded) * 100) : Number(source.own_refunded);
  const refunded = Math.min(Math.max(own, await refundedOf(trx, w.shopId, remoteId)), total);
  const { body } = await mergedBody(trx, w.shopId, orders, remoteId, { total_refunded: refunded / 100 });
  await put(trx, w, orders, remoteId, change(body));
  return stored;
}

async function applyRefund(trx: DB, w: Writer, refundId: number, orderRemoteId: number, amount: number): Promise<Outcome> {
  await recordRefund(trx, w.shopId, refundId, orderRemoteId, amount, w.now);
  const stored = await rewriteOrder(trx, w, orderRemoteId, (body) => body);
  const wrote = {
    resource: 'order',
    resourceId: orderRemoteId,
    customerRemoteId: stored === undefined ? null : (stored.customer_remote_id as number | null),
  } as const;
  if (stored === undefined) return outcome('deferred', 'the order has not arrived yet: the refund applies when it does', wrote);
  return outcome('applied', null, wrote);
}

async function applyRedact(trx: DB, w: Writer, remoteId: number): Promise<Outcome> {
  const wrote = { resource: 'customer', resourceId: remoteId, customerRemoteId: remoteId } as const;
  try {
    await redactCustomer(trx, w.shopId, String(remoteId), w.now);
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return outcome('ignored', 'no such customer here', wrote);
    throw error;
  }
  return outcome('applied', null, wrote);
}

/** Writes what a delivery asks for; a refusal of the API (AppError) propagates, and the caller keeps the delivery as failed. */
export async function applyIntent(trx: DB, w: Writer, connectionId: number, intent: Intent): Promise<Outcome> {
  switch (intent.kind) {
    case 'customer': {
      const wrote = { resource: 'customer', resourceId: intent.customer.remoteId, customerRemoteId: intent.customer.remoteId } as const;
      return (await applyCustomer(trx, w, intent.customer))
        ? outcome('applied', null, wrote)
        : outcome('stale', 'a payload of this customer as new or newer was applied', wrote);
    }
    case 'order':
      return applyOrder(trx, w, intent.order);
    case 'refund':
      return applyRefund(trx, w, intent.refundId, intent.orderRemoteId, intent.amount);
    case 'void': {
      const stored = await rewriteOrder(trx, w, intent.orderRemoteId, (body) => ({ ...body, financial_status: 'voided' }));
      const wrote = { resource: 'order', resourceId: intent.orderRemoteId } as const;
      return stored === undefined ? outcome('ignored', 'no such order here', wrote) : outcome('applied', null, wrote);
    }
    case 'redact':
      return applyRedact(trx, w, intent.customerRemoteId);
    case 'uninstall':
      await setConnectionStatus(trx, w.shopId, connectionId, 'uninstalled', w.now);
      return outcome('applied');
    case 'ignore':
      return outcome('ignored', intent.reason);
  }
}

/** After the delivery is settled: a redaction erases the kept bodies that concerned the person, its own included. */
export async function afterSettled(trx: DB, shopId: number, intent: Intent): Promise<void> {
  if (intent.kind === 'redact') await eraseBodiesOf(trx, shopId, intent.customerRemoteId);
}
