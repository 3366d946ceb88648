/**
 * The webhooks role (`serve --role webhooks`): one delivery worker per process. Scale by
 * running more processes; they share the outbox through FOR UPDATE SKIP LOCKED.
 */
import type { AppContext } from '../context.js';
import { assertKeyConfig } from '../../../infra/signing-keys/rotate.js';
import { startWebhookWorker } from '../../../commands/webhooks/delivery/worker.js';
import type { RunningRole } from './role.js';
import { checkSecretsAtStart, ROLE_SECRETS } from '../secrets.js';

export async function startWebhooksRole(ctx: AppContext): Promise<RunningRole> {
  // Webhook secrets are sealed with the signing keys' encryption key: same rule, same message.
  assertKeyConfig(ctx.config, ctx.logger);
  await checkSecretsAtStart(ctx, ROLE_SECRETS.webhooks);
  const worker = startWebhookWorker(ctx);
  return { name: 'webhooks', stop: () => worker.stop() };
}
