/**
 * POST /v1/admin/keys/rotate: a new active key; the old one stays in the JWKS for the
 * grace period (KEY_GRACE_PERIOD_SECONDS, 24 h by default), then retires.
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Api } from '../../infra/http/routes.js';
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import { requireAdminKey } from '../../src/kernel/auth/admin-key.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';

export const rotationResultSchema: JsonSchema = {
  type: 'object',
  required: ['message', 'newKid', 'oldKid', 'gracePeriodEndsAt'],
  properties: {
    message: { type: 'string' },
    newKid: { type: 'string', description: 'the new active key id' },
    oldKid: { type: 'string', description: 'the previous key id, still published during the grace period' },
    gracePeriodEndsAt: { type: 'string', format: 'date-time', description: 'ISO 8601: when the old key retires' },
  },
};

export function registerKeyAdminRoutes(api: Api, ctx: { keyRing: Pick<KeyRing, 'rotate'>; config: Pick<Config, 'keys'> }): void {
  const ring = ctx.keyRing;
  api.route({
    method: 'post',
    path: '/v1/admin/keys/rotate',
    summary: 'Rotate the JWT signing key',
    description: 'Requires x-admin-key (ADMIN_API_KEY). Missing or wrong key: 401. No ADMIN_API_KEY configured on the server: 403 (admin API disabled). Every node signs with the new key within seconds.',
    tags: ['admin'],
    security: [{ AdminApiKey: [] }],
    before: [requireAdminKey(ctx.config.keys.adminApiKey)],
    responses: {
      200: { description: 'rotated', schema: rotationResultSchema },
      401: { description: 'x-admin-key missing or wrong' },
      403: { description: 'admin API disabled: ADMIN_API_KEY is not configured' },
      503: { description: 'database unreachable' },
    },
    async handler() {
      const r = await ring.rotate();
      return { body: { message: r.message, newKid: r.newKid, oldKid: r.oldKid, gracePeriodEndsAt: r.gracePeriodEndsAt.toISOString() } };
    },
  });
}
