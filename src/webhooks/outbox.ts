// The outbox that webhooks deliver from is the neutral seam events/outbox.ts; these are its
// names as webhook code knew them.
export { enqueueEvents as enqueueWebhookEvents, wantsTopics, type WebhookEventBody } from '../events/outbox.js';
