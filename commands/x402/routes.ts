/**
 * /v1/x402/demo, every method: a resource sold under the payment-gated protocol, with a
 * `deferred` (subscription) and an `x402://payg` (metered) requirement from the
 * X402_DEMO_* settings, so a fresh `make start` shows the whole flow with `tributary pay`.
 */
import type { RequestHandler } from 'express';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key } from '../../src/kernel/http/schema.js';
import type { X402Deps } from './engine.js';
import { DEMO_PAID_ANSWER, demoContent, demoExactTerms, demoSetup, demoStandardRequirements } from './demo.js';
import type { ExactFacilitator } from './exact/facilitator.js';
import { paymentRequired } from './middleware.js';
import { registerStandardDemo } from './standard/demo-route.js';

const requirementSchema = {
  type: 'object',
  required: ['scheme', 'network', 'amount', 'recipient', 'gateway', 'tokenMint', 'currency', 'resource', 'id'],
  properties: {
    scheme: { type: 'string', enum: ['deferred', 'x402://payg', 'x402://upto'] },
    network: { type: 'string', description: 'CAIP-2 chain id' },
    amount: { type: 'integer', description: 'smallest token units: subscription amount (deferred) or price of one request (payg)' },
    recipient: base58Key, gateway: base58Key, tokenMint: base58Key,
    currency: { type: 'string' },
    resource: { type: 'string', format: 'uri' },
    id: { type: 'string', description: 'stable hash of the requirement\'s terms' },
    description: { type: 'string' },
    memo: { type: 'string' },
    paymentFrequency: { type: 'string', description: 'Daily, Weekly, Monthly, Quarterly, SemiAnnually, Annually or Custom:<seconds>' },
    autoRenew: { type: 'boolean' },
    maxRenewals: { type: 'integer', nullable: true },
    gracePeriodSeconds: { type: 'integer', description: 'deferred: seconds past next_payment_due the subscription is still honoured (a tenth of the period unless the merchant says less, at most SUBSCRIPTION_GRACE_SECONDS)' },
    maxAmountPerPeriod: { type: 'integer' },
    periodLengthSeconds: { type: 'integer' },
    maxChunkAmount: { type: 'integer' },
    maxUnsettledAmount: { type: 'integer', description: 'x402://payg: the most a payer may use beyond what is charged on chain; beyond it requests are refused until the usage is charged' },
    minExpirySeconds: { type: 'integer', description: 'x402://payg: a policy\'s expiry_date must lie at least this many seconds after its creation (a period and the time its last usage takes to be charged)' },
    maxAmount: { type: 'integer', description: 'x402://upto: the most the merchant may settle (= amount)' },
    maxTimeoutSeconds: { type: 'integer', description: 'x402://upto: the longest authorization window' },
    validAfter: { type: 'integer', description: 'x402://upto: the window offered, unix seconds' },
    deadline: { type: 'integer', description: 'x402://upto: the window offered, unix seconds; the JWT expires then' },
    extra: { type: 'object', properties: { programId: base58Key, x402Version: { type: 'integer' } } },
  },
};

export const paymentRequiredBodySchema = {
  type: 'object',
  required: ['accepts'],
  properties: {
    x402Version: { type: 'integer', enum: [2] },
    accepts: { type: 'array', items: requirementSchema },
    error: { type: 'string', description: 'why the request was not served' },
    code: { type: 'string', enum: ['payment_required'] },
    success: { type: 'boolean', enum: [false] },
    timestamp: { type: 'integer' },
  },
};

const PROTOCOL = `Payment-gated (HTTP 402, protocol version 2).
1. Without payment: 402, header \`Payment-Required\` (scheme, network, resource, id, amount, currency, recipient, gateway, tokenMint of the preferred requirement as comma-separated key=value pairs), body \`{accepts: [...]}\`.
2. Header \`Payment: <base64 of {"x402Version":2,"scheme":"deferred"|"x402://payg"|"x402://upto","network":"<CAIP-2>","id":"<accepts[].id>","payload":{"serializedTransaction":"<base64 signed Solana transaction>","proof":{"signedAt":<unix seconds>,"signature":"<base58>"}}}>\`. The proof (required; it never goes on chain) is the payer's ed25519 signature over the UTF-8 bytes of \`tributary-x402|<accepts[].id>|<accepts[].resource>|<the transaction's signature, base58>|<signedAt>\`, signedAt within 300 s of the server's clock; without it, or by another wallet, 402. A payer who holds a matching Active policy may send \`"payload":{"payer":"<wallet>","proof":{...}}\` with no transaction, the proof signing \`-\` in place of the transaction signature. The transaction is the one the Tributary SDK builds, signed by the payer: create-idempotent of the payer's token account (when missing), create_user_payment (when the payer has none), create_payment_policy with the requirement's recipient, gateway, mint and terms (Subscription for deferred; PayAsYouGo for x402://payg; UpTo for x402://upto), an SPL revoke + approve of the user payment PDA for at least the policy's yearly allowance, and for deferred the fee accounts' ATAs (when missing) and execute_payment by the payer paying the first period; a deferred JWT is issued once the chain shows payment_count ≥ 1. It is checked, sent and confirmed once per signature → 200, header \`Payment-Response: scheme=..,network=..,id=..,timestamp=<unix ms>,policy=<address>[,transaction=<signature>]\`, body \`{jwt, message}\`.
3. Header \`Authorization: Bearer <jwt>\` → the content; deferred: only while next_payment_due + the requirement's gracePeriodSeconds is ahead (else 402, overdue), a Completed fixed-term subscription too, through the period its last payment bought; x402://payg requests are metered against the policy's per-request and per-period caps.`;

export interface X402RouteDeps {
  /** the node's x402 collaborators, shared with the facilitator */
  x402: X402Deps;
  config: Config;
  logger: Logger;
  clock: Clock;
  /** the node's exact facilitator: the standard demo offers exact first where it supports the network */
  exact?: ExactFacilitator;
}

export function registerX402Routes(api: Api, ctx: X402RouteDeps): void {
  const setup = demoSetup(ctx.config);
  if (!setup.on) {
    ctx.logger.info({ why: setup.why }, 'x402 demo resource off');
    return;
  }
  const guard = paymentRequired(setup.requirements, ctx.x402);
  // SPEC: the 402 flow applies to "any method on the protected path"; one guard (and so one
  // set of requirement ids, one idempotency store, one meter) serves every method.
  for (const method of DEMO_METHODS) registerDemo(api, ctx, method, guard);
  // the same resource in the x402 v2 standard wire, for the ecosystem's clients; exact first where offered
  const exactTerms = ctx.exact ? demoExactTerms(setup, ctx.config) : undefined;
  const standard = paymentRequired(demoStandardRequirements(setup), ctx.x402, {
    wire: 'standard', resource: { description: 'Tributary demo content', mimeType: 'application/json' },
    // a payer who holds a demo policy already signs in with its wallet (docs/x402-plugins.md)
    signIn: true,
    ...(ctx.exact && exactTerms ? { exact: { facilitator: ctx.exact, terms: exactTerms } } : {}),
  });
  for (const method of DEMO_METHODS) registerStandardDemo(api, ctx.clock, method, standard);
}

/** Every method a route can be declared with (HEAD is served as GET by express). */
export const DEMO_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function registerDemo(api: Api, ctx: Pick<X402RouteDeps, 'clock'>, method: (typeof DEMO_METHODS)[number], guard: RequestHandler): void {
  api.route({
    method,
    path: '/v1/x402/demo',
    summary: `Demo resource sold under the payment-gated protocol (${method.toUpperCase()})`,
    description: `${PROTOCOL}\nEvery method of the path is protected alike: any method without payment answers 402; the Payment header and the bearer JWT work with any method.`,
    tags: ['x402'],
    security: [{ BearerAuth: [] }, {}],
    query: { type: 'object', additionalProperties: false, properties: {} },
    before: [guard],
    responses: {
      200: {
        description: 'with a Payment header: the JWT; with a bearer JWT: the content',
        headers: { 'Payment-Response': { type: 'string' } },
        schema: {
          oneOf: [
            DEMO_PAID_ANSWER,
            { type: 'object', required: ['content', 'grant'], properties: { content: { type: 'string' }, method: { type: 'string' }, grant: { type: 'object' } } },
          ],
        },
      },
      402: { description: 'payment required', headers: { 'Payment-Required': { type: 'string' } }, schema: paymentRequiredBodySchema },
    },
    handler: demoContent(ctx.clock),
  });
}
