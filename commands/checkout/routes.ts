/**
 * Hosted checkout sessions:
 * - POST /v1/checkout/sessions, GET /v1/checkout/sessions/{id}: the merchant's, behind a
 *   gateway API key or JWT (credential.ts); another gateway's session is a 404.
 * - GET …/{id}/public, POST …/{id}/transaction, POST …/{id}/pay: the page's, without
 *   credentials (the id is the capability), under the standard rate limit.
 */
import type { Request } from 'express';
import type { Api } from '../../infra/http/routes.js';
import type { Db } from '../../infra/postgres/database.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import type { PaymentEngine } from '../x402/engine.js';
import type { RoomEmitter } from '../scheduler/lifecycle-events.js';
import { CHECKOUT_SECURITY, callerGateway, requireCheckoutCredential, type CredentialDeps } from './credential.js';
import { payFor, transactionFor, type PayBody, type PayDeps } from './pay.js';
import { publicView, type PublicDeps } from './public-view.js';
import { CheckoutRefusal } from './refusals.js';
import type { MintAmounts, RequirementContext } from './requirement.js';
import {
  createBodySchema, createdSchema, merchantViewSchema, paidSchema, payBodySchema, publicViewSchema, sessionParams, transactionBodySchema, transactionSchema,
} from './schemas.js';
import { createSession, merchantView, sessionOf, type CheckoutDeps, type CreateInput } from './sessions.js';

export interface CheckoutRouteDeps extends CredentialDeps {
  db: Db;
  rpc: RpcClient;
  clock: Clock;
  config: Pick<Config, 'http' | 'solana' | 'access'>;
  amounts: MintAmounts;
  /** the node's payment engine: the one the middleware and the facilitator call */
  engine: PaymentEngine;
  rooms?: RoomEmitter | undefined;
  /** commitment of confirmation and reads (settlement's: confirmed at least) */
  commitment: Commitment;
}

/** PUBLIC_BASE_URL, else the request's own origin when its Host is a plain host[:port]. */
export function pageBaseOf(config: Pick<Config, 'http'>, req: Request): string {
  if (config.http.publicUrl) return config.http.publicUrl.replace(/\/+$/, '');
  const host = req.get('host') ?? '';
  return /^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host) || /^\[[0-9a-fA-F:.]+\](:\d{1,5})?$/.test(host)
    ? `${req.protocol}://${host}` : `http://localhost:${config.http.port}`;
}

const ENDED = {
  409: { description: 'session_complete: paid already; session_paying: another payment of it is being confirmed' },
  410: { description: 'session_expired' },
};

async function refusing<T>(now: () => number, run: () => Promise<T>): Promise<{ body: T } | { status: number; body: unknown }> {
  try {
    return { body: await run() };
  } catch (err) {
    if (err instanceof CheckoutRefusal) return err.reply(now()) as { status: number; body: unknown };
    throw err;
  }
}

export function registerCheckoutRoutes(api: Api, ctx: CheckoutRouteDeps): void {
  const now = () => ctx.clock.now();
  const requirements: RequirementContext = { programId: ctx.config.solana.programId, graceCapSeconds: ctx.config.access.subscriptionGraceSeconds };
  const deps: CheckoutDeps = { db: ctx.db, amounts: ctx.amounts, requirements, now };
  const fees = { rpc: ctx.rpc, programId: requirements.programId, commitment: ctx.commitment, configAddress: createPdaDeriver(requirements.programId).config() };
  const pub: PublicDeps = { amounts: ctx.amounts, requirements, fees };
  const pay: PayDeps = { db: ctx.db, rpc: ctx.rpc, commitment: ctx.commitment, engine: ctx.engine, requirements, now, rooms: ctx.rooms };
  const credential = requireCheckoutCredential(ctx);
  const auth = { 401: { description: 'no credential, or an invalid, revoked or expired one' }, 403: { description: 'not a gateway credential, or the requirement names another gateway' } };

  api.route<Record<string, never>, Record<string, never>, CreateInput>({
    method: 'post', path: '/v1/checkout/sessions', summary: 'Create a hosted checkout session',
    description: 'A requirement (an accepts entry of a 402 answer) sold once on a hosted page at /checkout/{id}. Amounts in base units, or in whole tokens as a decimal string ("12.5"). '
      + 'Terms the x402 engine would refuse are a 400 now. docs/checkout.md.',
    tags: ['checkout'], security: CHECKOUT_SECURITY, before: [credential], body: createBodySchema,
    responses: { 201: { description: 'created', schema: createdSchema }, 400: { description: 'invalid requirement, URL or expiry' }, ...auth, 404: { description: 'the token mint is not a mint on this chain' }, 503: { description: 'the chain did not answer' } },
    async handler({ body, req, res }) {
      return { status: 201, body: await createSession(deps, callerGateway(res), body, pageBaseOf(ctx.config, req)) };
    },
  });

  api.route<Record<string, never>, { id: string }>({
    method: 'get', path: '/v1/checkout/sessions/:id', summary: 'A checkout session, as its merchant sees it',
    description: 'open, complete (with the payer, the policy and the transaction) or expired (an open session past its expiry reads expired at once).',
    tags: ['checkout'], security: CHECKOUT_SECURITY, before: [credential], params: sessionParams,
    responses: { 200: { description: 'the session', schema: merchantViewSchema }, 400: { description: 'malformed id' }, ...auth, 404: { description: 'no such session of this gateway' } },
    async handler({ params, res }) {
      const row = await sessionOf(deps, params.id, callerGateway(res));
      return { body: merchantView(deps, row, new Date(now())) };
    },
  });

  api.route<Record<string, never>, { id: string }>({
    method: 'get', path: '/v1/checkout/sessions/:id/public', summary: 'A checkout session, as its payer sees it',
    description: 'No credentials: the id is the capability. Who is paid, how much and how often, the fees, the first charge; successUrl once complete.',
    tags: ['checkout'], params: sessionParams,
    responses: { 200: { description: 'the session', schema: publicViewSchema }, 400: { description: 'malformed id' }, 404: { description: 'no such session' }, 503: { description: 'the chain did not answer' } },
    async handler({ params }) {
      return { body: await publicView(pub, await sessionOf(deps, params.id), new Date(now())) };
    },
  });

  api.route<Record<string, never>, { id: string }, { payer: string }>({
    method: 'post', path: '/v1/checkout/sessions/:id/transaction', summary: 'The unsigned Payment transaction of a checkout session for a wallet',
    description: 'Built as the SDK builds it for the session\'s requirement, the payer its fee payer; with the proof-of-possession message to sign once the transaction is signed.',
    tags: ['checkout'], params: sessionParams, body: transactionBodySchema,
    responses: { 200: { description: 'the transaction', schema: transactionSchema }, 400: { description: 'malformed payer or id' }, 404: { description: 'no such session' }, ...ENDED, 503: { description: 'the chain did not answer' } },
    async handler({ params, body }) {
      const row = await sessionOf(deps, params.id);
      return refusing(now, () => transactionFor(pay, row, body.payer));
    },
  });

  api.route<Record<string, never>, { id: string }, PayBody>({
    method: 'post', path: '/v1/checkout/sessions/:id/pay', summary: 'Pay a checkout session with the signed transaction',
    description: 'Through the x402 engine\'s pay (the checks of a Payment header), confirmed on chain before the answer; one pay wins. A refusal is a 402 with the reason in words (`error`) and the engine\'s (`reason`); the session stays open.',
    tags: ['checkout'], params: sessionParams, body: payBodySchema,
    responses: {
      200: { description: 'paid', schema: paidSchema }, 400: { description: 'malformed transaction or proof' },
      402: { description: 'payment_refused: the transaction does not carry the session\'s terms, the proof is not the payer\'s, or the program refused it (insufficient balance, paused, ...)' },
      404: { description: 'no such session' }, ...ENDED, 503: { description: 'the chain did not answer: send the same signed transaction again' },
    },
    async handler({ params, body }) {
      const row = await sessionOf(deps, params.id);
      return refusing(now, () => payFor(pay, row, body));
    },
  });
}
