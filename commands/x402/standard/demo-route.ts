/**
 * /v1/x402/demo-standard, every method: the demo resource (demo.ts) sold in the x402 v2
 * standard wire (middleware.ts, `wire: 'standard'`), so the ecosystem's clients read its
 * 402 unchanged. The same requirements (and so the same ids and JWTs) as /v1/x402/demo.
 */
import type { RequestHandler } from 'express';
import type { Api } from '../../../infra/http/routes.js';
import type { Clock } from '../../../src/kernel/domain/clock.js';
import type { JsonSchema } from '../../../src/kernel/http/schema.js';
import { DEMO_PAID_ANSWER, demoContent } from '../demo.js';

export const DEMO_STANDARD_PATH = '/v1/x402/demo-standard';

const standardRequirementSchema: JsonSchema = {
  type: 'object',
  required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds', 'extra'],
  properties: {
    scheme: { type: 'string' }, network: { type: 'string', description: 'CAIP-2 chain id' },
    amount: { type: 'string', description: 'smallest token units' }, asset: { type: 'string', description: 'the token mint' },
    payTo: { type: 'string', description: 'the recipient' },
    maxTimeoutSeconds: { type: 'integer', description: 'x402://upto: the longest authorization window; otherwise how long the payer\'s proof is good' },
    extra: { type: 'object', description: 'Tributary\'s terms as in SPEC.md\'s accepts: id (name it in accepted.extra.id), gateway, currency, programId, paymentFrequency, caps, maxChunkAmount, pricePerRequest, ...' },
  },
};

/** The PAYMENT-REQUIRED header's PaymentRequired, in the error envelope. */
const standardPaymentRequiredSchema: JsonSchema = {
  type: 'object',
  required: ['x402Version', 'resource', 'accepts', 'error'],
  properties: {
    x402Version: { type: 'integer', enum: [2] },
    resource: { type: 'object', properties: { url: { type: 'string' }, description: { type: 'string' }, mimeType: { type: 'string' } } },
    accepts: { type: 'array', items: standardRequirementSchema },
    error: { type: 'string', description: 'why the request was not served' },
    code: { type: 'string', enum: ['payment_required'] },
    success: { type: 'boolean', enum: [false] },
    timestamp: { type: 'integer' },
  },
};

const PROTOCOL = `The x402 v2 standard wire (docs/protocol.md, "Standard wire").
1. Without payment: 402, header \`PAYMENT-REQUIRED\`: base64 of the JSON PaymentRequired {x402Version: 2, error, resource: {url, description, mimeType}, accepts: [{scheme, network, amount (string), asset, payTo, maxTimeoutSeconds, extra: {id, gateway, ...terms}}]}; the body is the same object in the error envelope.
2. Header \`PAYMENT-SIGNATURE\`: base64 of the JSON PaymentPayload {x402Version: 2, resource: {url}, accepted: <the accepts entry paid>, payload: <the Tributary payload of the Payment header: {serializedTransaction, proof} or {payer, proof}>}. SPEC.md's \`Payment\` header is accepted too. Paid: 200, header \`PAYMENT-RESPONSE\`: base64 of the JSON SettleResponse {success: true, transaction, network, payer, extra: {policy, requirementId, scheme, created, expiresAt}}, body \`{jwt, message}\`. Refused: 402 as in 1 with the reason in error.
3. Header \`Authorization: Bearer <jwt>\` → the content, as on /v1/x402/demo.
4. x402 \`exact\` (offered first where the service settles exact: mainnet, devnet, testnet): a \`PAYMENT-SIGNATURE\` of @x402/svm's exact client (\`accepted\` = accepts[0], \`payload.transaction\` the payer-signed TransferChecked, the service's fee payer in extra.feePayer) is verified and settled once → 200 with the content itself and \`PAYMENT-RESPONSE\` (SettleResponse {success, transaction, network, payer}); a refused or replayed one: 402 with the reason; a settlement not yet confirmed: 503 with Retry-After (send the same payment again).`;

export function registerStandardDemo(api: Api, clock: Clock, method: 'get' | 'post' | 'put' | 'patch' | 'delete', guard: RequestHandler): void {
  api.route({
    method,
    path: DEMO_STANDARD_PATH,
    summary: `Demo resource sold in the x402 v2 standard wire (${method.toUpperCase()})`,
    description: `${PROTOCOL}\nEvery method of the path is protected alike.`,
    tags: ['x402'],
    security: [{ BearerAuth: [] }, {}],
    query: { type: 'object', additionalProperties: false, properties: {} },
    before: [guard],
    responses: {
      200: {
        description: 'with a Tributary payment: the JWT; with an exact payment or a bearer JWT: the content',
        headers: { 'PAYMENT-RESPONSE': { type: 'string' } },
        schema: {
          oneOf: [
            DEMO_PAID_ANSWER,
            { type: 'object', required: ['content'], properties: { content: { type: 'string' }, method: { type: 'string' }, grant: { type: 'object' } } },
          ],
        },
      },
      402: { description: 'payment required', headers: { 'PAYMENT-REQUIRED': { type: 'string' } }, schema: standardPaymentRequiredSchema },
      503: { description: 'an exact settlement not confirmed yet, or the chain did not answer: send the same payment again after Retry-After' },
    },
    handler: demoContent(clock),
  });
}
