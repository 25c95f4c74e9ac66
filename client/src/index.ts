export { createApiClient, type ApiClient, type CoreOptions, type ListItem, type ListPath, type ResponseData } from './core.js';
export { LoyaltyApiError, type ErrorDetail, type LoyaltyErrorCode } from './errors.js';
export { createLoyaltyClient, type LoyaltyClient, type LoyaltyClientOptions } from './merchant.js';
export { newIdempotencyKey, type RetryOptions, type TransportOptions } from './retry.js';
export type { components, operations, paths } from './schema.js';
export { createStorefrontClient, type StorefrontClient, type StorefrontClientOptions, type StorefrontPaths, type TokenSource } from './storefront.js';
