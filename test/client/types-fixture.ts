import { createLoyaltyClient } from '../../client/src/index.js';

// Compiled by test/client/types.test.ts (and by the root build): each line under
// `@ts-expect-error` must not compile, and every other line must.

const client = createLoyaltyClient({ baseUrl: 'http://localhost:3000', token: 'lty_x' });

export async function typed(): Promise<void> {
  const shop = await client.GET('/merchant_api/v1/shop');
  const name: string = shop.data.name;
  const reward = await client.POST('/merchant_api/v1/rewards', { body: { name, kind: 'fixed_amount_discount', points_price: 100, value: 5 } });
  await client.GET('/merchant_api/v1/rewards/{id}', { params: { path: { id: reward.data.id } } });
  await client.POST('/merchant_api/v1/redemptions/{id}/use', { params: { path: { id: 31 } } });
  await client.GET('/merchant_api/v1/points_events', { params: { query: { 'pagination[limit]': 50 } } });
  for await (const event of client.paginate('/merchant_api/v1/points_events')) {
    const points: number = event.points_amount;
    void points;
  }

  // @ts-expect-error a path the API does not have
  await client.GET('/merchant_api/v1/no_such_path');
  // @ts-expect-error a path that has no POST
  await client.POST('/merchant_api/v1/shop');
  await client.POST('/merchant_api/v1/points_events', { body: { customer_identifier: '7012345678', source: 'manual', points_amount: 10 } });
  // @ts-expect-error a body without its required customer_identifier
  await client.POST('/merchant_api/v1/points_events', { body: { source: 'manual', points_amount: 10 } });
  // @ts-expect-error a query parameter of the wrong type
  await client.GET('/merchant_api/v1/points_events', { params: { query: { 'pagination[limit]': 'fifty' } } });
  // @ts-expect-error a path id that is text, not an integer
  await client.GET('/merchant_api/v1/rewards/{id}', { params: { path: { id: '12' } } });
  // @ts-expect-error a path id left out
  await client.GET('/merchant_api/v1/rewards/{id}');
  // @ts-expect-error paginate() over a path that is not a list
  client.paginate('/merchant_api/v1/shop');
  // @ts-expect-error a field the record does not have
  void shop.data.no_such_field;
}
