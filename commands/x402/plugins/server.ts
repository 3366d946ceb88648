/**
 * Tributary's schemes as x402 server plugins: one @x402/core `SchemeNetworkServer` per
 * scheme, so a merchant on @x402/express (or any x402ResourceServer) whose facilitator is
 * this service sells subscriptions, pay-as-you-go, prepaid credits and upto authorizations:
 *
 *   const facilitator = new HTTPFacilitatorClient({ url: 'https://api.tributary.so/v1/x402',
 *     createAuthHeaders: async () => ({ verify: key, settle: key, supported: key }) });  // key = { 'x-api-key': ... }
 *   const server = new x402ResourceServer(facilitator);
 *   for (const s of tributaryServerSchemes({ gateway })) server.register('solana:*', s);
 *   app.use(paymentMiddleware({ 'GET /report': { accepts: { scheme: 'deferred', network, payTo,
 *     price: '$1.00', extra: { paymentFrequency: 'Monthly' } } } }, server));
 *
 * `enhancePaymentRequirements` turns the route's requirement into Tributary's standard form
 * (standard/requirements.ts): the terms checked and defaulted as the service checks them
 * (requirements.ts), the requirement's id (`extra.id`, which the payer's proof and the
 * facilitator name) and the program (`extra.programId`, from the facilitator's /supported).
 * The flow is `upfront`: the facilitator settles (creates the policy, answers the JWT in
 * PAYMENT-RESPONSE's extra) before the route's handler runs.
 */
import type { AssetAmount, Network, PaymentRequirements, Price, SchemeNetworkServer, SupportedKind } from '@x402/core/types';
import { convertToTokenAmount, parseMoney } from '@x402/core/utils';
import { SCHEMES, type Scheme } from '../requirements.js';
import { acceptedRequirement, normalizeRequirement } from '../requirement-forms.js';
import { standardRequirement, wireRequirement } from '../standard/requirements.js';
import { findTributaryAsset } from './client.js';

const USDC_MAINNET = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const USDC_DEVNET = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

export interface TributaryServerOptions {
  /** the gateway the merchant sells through, unless a route's `extra.gateway` names one */
  gateway?: string;
  /** the token of a money price ("$1.00"); default USDC (devnet USDC off mainnet) */
  asset?: string;
}

/** upto: the window is dated when the 402 is answered, so a paid request's window differs from a fresh 402's */
const UPTO_DYNAMIC = ['validAfter', 'deadline'];

export function tributaryServerScheme(scheme: Scheme, opts: TributaryServerOptions = {}): SchemeNetworkServer {
  if (!(SCHEMES as readonly string[]).includes(scheme)) throw new Error(`scheme must be one of ${SCHEMES.join(', ')}`);
  const assetOf = (network: Network) => opts.asset ?? (network === SOLANA_MAINNET ? USDC_MAINNET : USDC_DEVNET);
  return {
    scheme,
    defaultAssetTransferMethod: 'default',
    paymentFlows: { default: { supported: ['upfront'], default: 'upfront' } },
    ...(scheme === 'x402://upto' ? { dynamicExtraFields: UPTO_DYNAMIC } : {}),

    async parsePrice(price: Price, network: Network): Promise<AssetAmount> {
      if (typeof price === 'object') return price;
      const asset = assetOf(network);
      const decimals = findTributaryAsset(asset)?.decimals;
      if (decimals === undefined) throw new Error(`a money price needs a token of known decimals; give ${scheme} a price {amount, asset} in smallest units`);
      return { asset, amount: convertToTokenAmount(parseMoney(price).amount, decimals) };
    },

    getAssetDecimals: (asset) => findTributaryAsset(asset)?.decimals,

    async enhancePaymentRequirements(req: PaymentRequirements, kind: SupportedKind): Promise<PaymentRequirements> {
      const programId = kind.extra?.['programId'];
      if (typeof programId !== 'string') throw new Error(`the facilitator's ${scheme} on ${kind.network} names no programId: it is not a Tributary facilitator`);
      const gateway = req.extra?.['gateway'] ?? opts.gateway;
      if (typeof gateway !== 'string') throw new Error(`a ${scheme} requirement needs a gateway: extra.gateway, or tributaryServerSchemes({ gateway })`);
      // the service's own checks and defaults: a requirement the facilitator would refuse is refused here, at start
      const r = normalizeRequirement(wireRequirement({ ...req, extra: { ...req.extra, gateway } }, undefined), programId);
      const std = standardRequirement(acceptedRequirement(r, ''));
      return { ...req, maxTimeoutSeconds: std.maxTimeoutSeconds, extra: { ...req.extra, ...std.extra } };
    },

    validateFacilitatorSupport(_network, kind) {
      return typeof kind.extra?.['programId'] === 'string' ? undefined : `the facilitator's ${scheme} names no programId: it is not a Tributary facilitator`;
    },
  };
}

/** The four Tributary schemes' server plugins; register each on 'solana:*' (or the network you sell on). */
export function tributaryServerSchemes(opts: TributaryServerOptions = {}): SchemeNetworkServer[] {
  return SCHEMES.map((s) => tributaryServerScheme(s, opts));
}
