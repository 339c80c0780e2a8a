import type { AppDeps } from '../../app/app-deps.js';
import type { WebhookDeliverer } from './webhook-deliverer.js';

/** The webhook deliverer of this process (set up by the webhooks module); writers of outbox rows wake it after they commit. */
export function webhookDeliverer(deps: AppDeps): WebhookDeliverer | undefined {
  return deps.services.webhookDeliverer;
}
