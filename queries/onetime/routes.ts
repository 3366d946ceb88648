/** SPEC "One-time payments": GET /v1/onetime/{trackingId}. */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import { isPublicKey } from '../../src/kernel/domain/pda.js';
import { PAYMENT_MEMO_BYTES, trackingIdToMemo } from '../../src/kernel/domain/memo.js';
import { normalizedPolicySchema } from '../../src/kernel/domain/policy-schema.js';
import { envelopeSchema } from '../../src/kernel/http/envelope.js';
import { invalid } from '../../src/kernel/http/errors.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key, limitSchema, offsetSchema } from '../../src/kernel/http/schema.js';
import { listOneTime } from './onetime-query.js';
import { readScope } from '../../src/kernel/names/read-scopes.js';

interface OneTimeQuery { recipient?: string; limit: number; offset: number }

export function registerOneTimeRoutes(api: Api, ctx: { dbRead: Db; config: Pick<Config, 'http'> }): void {
  api.route<OneTimeQuery, { trackingId: string }>({
    method: 'get',
    path: '/v1/onetime/:trackingId',
    summary: 'One-time payments by tracking id',
    description: 'OneTime payment policies whose memo is the tracking id (its 64-byte encoding), newest first, as normalized policies: '
      + 'status Completed with totalPaid and lastPaymentAt once paid. data is one object when exactly one record matches (the trackingId and recipient), '
      + 'otherwise an array (empty when none). The shape follows the number of matching records, not the page: with several matches, limit and offset page '
      + 'the array (limit=1 answers an array of one); a single match is answered as that object whatever limit and offset say.',
    tags: ['onetime'],
    params: {
      type: 'object',
      additionalProperties: false,
      required: ['trackingId'],
      properties: { trackingId: { type: 'string', minLength: 1, maxLength: PAYMENT_MEMO_BYTES, description: 'tracking id assigned at checkout (at most 64 UTF-8 bytes)' } },
    },
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        recipient: { ...base58Key, description: 'only payments to this recipient wallet' },
        limit: limitSchema(100, ctx.config.http.maxLimit),
        offset: offsetSchema,
      },
    },
    responses: {
      200: {
        description: 'one record, or an array of records',
        schema: envelopeSchema({ oneOf: [normalizedPolicySchema, { type: 'array', items: normalizedPolicySchema }] }),
      },
    },
    cachedFrom: ['payment-policies'],
    // every record carries the trackingId's memo
    cacheScopes: (_q, p) => {
      const memo = trackingIdToMemo(p.trackingId, PAYMENT_MEMO_BYTES);
      return memo ? [readScope.memo(memo)] : undefined;
    },
    async handler({ params, query }) {
      const memo = trackingIdToMemo(params.trackingId, PAYMENT_MEMO_BYTES);
      if (!memo) throw invalid(`trackingId must be 1 to ${PAYMENT_MEMO_BYTES} UTF-8 bytes (its memo encoding)`);
      if (query.recipient !== undefined && !isPublicKey(query.recipient)) throw invalid('recipient is not a base58 public key of 32 bytes');
      const found = await listOneTime(ctx.dbRead, memo, query.recipient, query);
      return { json: found.kind === 'one' ? found.doc : `[${found.docs.join(',')}]`, envelope: true };
    },
  });
}
