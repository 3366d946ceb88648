/**
 * The demo resource's requirements, from the X402_DEMO_* settings. On the localnet the
 * recipient and gateway need no setting: the localnet is deterministic for LOCALNET_SEED,
 * so its first fixture gateway (and that gateway's authority, as the merchant paid) are
 * derived here exactly as the localnet derives them. Elsewhere, without both settings,
 * the demo is off.
 */
import { onLocalnet, type Config } from '../../src/kernel/config/config.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { deriveKeypair } from '../../src/kernel/domain/seeded-keypair.js';
import type { Request, Response } from 'express';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { JsonSchema } from '../../src/kernel/http/schema.js';
import { x402Grant } from './middleware.js';
import type { PaymentRequirementInput } from './requirements.js';
import { EXACT_NETWORKS } from './exact/facilitator.js';
import type { ExactTerms } from './standard/exact-pay.js';

export type DemoSetup = { on: true; requirements: PaymentRequirementInput[] } | { on: false; why: string };

/** The first fixture gateway of a localnet seed: its authority and its account. */
export function localnetGateway(seed: string, programId: string): { authority: string; address: string } {
  const authority = deriveKeypair(seed, 'gateway-authority-0').publicKey.toBase58();
  return { authority, address: createPdaDeriver(programId).gateway(authority) };
}

export function demoSetup(config: Config): DemoSetup {
  const d = config.x402.demo;
  if (!d.enabled) return { on: false, why: 'X402_DEMO_ENABLED is false' };
  const local = onLocalnet(config.solana) ? localnetGateway(config.localnet.seed, config.solana.programId) : undefined;
  const recipient = d.recipient ?? local?.authority;
  const gateway = d.gateway ?? local?.address;
  if (!recipient || !gateway) return { on: false, why: 'X402_DEMO_RECIPIENT and X402_DEMO_GATEWAY are unset and the cluster is not the localnet' };
  const common = { network: config.solana.network, recipient, gateway, tokenMint: d.tokenMint ?? config.solana.defaultStablecoin };
  return {
    on: true,
    requirements: [
      { ...common, scheme: 'deferred', amount: d.amount, paymentFrequency: d.frequency, autoRenew: true, maxRenewals: null, description: 'demo subscription' },
      {
        ...common, scheme: 'x402://payg', amount: d.paygPrice, maxChunkAmount: d.paygMaxChunk, maxAmountPerPeriod: d.paygMaxPerPeriod,
        periodLengthSeconds: d.paygPeriodSeconds, maxUnsettledAmount: d.paygMaxUnsettled || d.paygMaxPerPeriod * 10,
        description: 'demo pay-as-you-go, metered per request',
      },
    ],
  };
}

/**
 * The requirements /v1/x402/demo-standard offers, preferred first: a client of the x402
 * standard takes the first it can pay. The standard's own `exact` leads that list
 * (demoExactTerms, offered through the middleware's `exact` option since its fee payer is
 * read from the exact facilitator); Tributary's schemes follow.
 */
export function demoStandardRequirements(setup: Extract<DemoSetup, { on: true }>): PaymentRequirementInput[] {
  return [...setup.requirements];
}

/**
 * The demo's `exact` terms: one request for the pay-as-you-go price (X402_DEMO_PAYG_PRICE)
 * in the demo's token to the demo recipient, recorded for the demo gateway. Undefined where
 * exact is not offered (the plain localnet: the ecosystem's clients know only Solana's
 * public networks; SOLANA_CLUSTER=devnet on the localnet offers it).
 */
export function demoExactTerms(setup: Extract<DemoSetup, { on: true }>, config: Config): ExactTerms | undefined {
  const head = setup.requirements[0];
  if (!head || !EXACT_NETWORKS.includes(config.solana.network)) return undefined;
  return {
    network: config.solana.network, amount: config.x402.demo.paygPrice, asset: head.tokenMint ?? config.solana.defaultStablecoin,
    payTo: head.recipient, gateway: head.gateway, maxTimeoutSeconds: 60,
  };
}

/** A paid request's answer on either demo route: the JWT to present as a bearer token. */
export const DEMO_PAID_ANSWER: JsonSchema = { type: 'object', required: ['jwt', 'message'], properties: { jwt: { type: 'string' }, message: { type: 'string' } } };

/** The demo content, served on either wire to whoever paid (`grant`: how, when a bearer JWT or a metered chunk admitted it). */
export function demoContent(clock: Clock) {
  return async ({ req, res }: { req: Request; res: Response }) => ({
    body: { content: 'Tributary demo content: paid for on chain, served with a JWT.', method: req.method, grant: x402Grant(res), servedAt: clock.now() },
  });
}
