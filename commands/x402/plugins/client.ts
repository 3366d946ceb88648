/**
 * Tributary's schemes as x402 client plugins: one @x402/core `SchemeNetworkClient` per
 * scheme (`deferred`, `x402://payg`, `x402://prepaid`, `x402://upto`), so the ecosystem's
 * own clients pay them unchanged:
 *
 *   const client = new x402Client();
 *   for (const s of tributaryClientSchemes(wallet, { rpcUrl })) client.register('solana:*', s);
 *   const paidFetch = wrapFetchWithPayment(fetch, client);        // @x402/fetch
 *
 * A scheme answers a standard requirement (PAYMENT-REQUIRED's accepts entry, Tributary's
 * terms in `extra`, standard/requirements.ts) with the Tributary payload the server takes in
 * PAYMENT-SIGNATURE: the signed transaction that creates the policy (payment-transaction.ts)
 * and the payer's proof of possession (proof.ts), which names the resource URL. @x402/core
 * hands a scheme the requirement only, so the scheme's own `onBeforePaymentCreation` hook
 * notes the PaymentRequired's resource for the requirement object it then receives.
 *
 * Contract: `createPaymentPayload` reads the chain (the payer's user payment, the gateway,
 * a blockhash) and signs with `wallet`; it throws when the requirement is not one of
 * Tributary's, or the chain does not answer. Nothing is sent: the server sends.
 */
import type { Keypair } from '@solana/web3.js';
import type { PaymentPayload, PaymentPayloadResult, PaymentRequirements, SchemeNetworkClient } from '@x402/core/types';
import { createRpcClient, type RpcClient } from '../../../infra/solana/rpc-client.js';
import type { Commitment } from '../../../infra/solana/chain-reader.js';
import { buildPayment, resignPayment } from '../payment-transaction.js';
import type { PaymentBody } from '../payload.js';
import { X402_VERSION, SCHEMES, type AcceptedRequirement, type Scheme } from '../requirements.js';

export interface TributaryClientOptions {
  /** the JSON-RPC URL of the chain the requirement's gateway lives on */
  rpcUrl: string;
  commitment?: Commitment;
  /** per RPC call; default 10000 */
  rpcTimeoutMs?: number;
}

/** USDC's mints (mainnet, devnet): @x402/core's spend controls pay only assets a scheme knows, up to $1 a payment by default. */
const USDC_MINTS = new Set(['EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU']);

export function findTributaryAsset(asset: string): { asset: string; decimals: number; symbol: string } | undefined {
  return USDC_MINTS.has(asset) ? { asset, decimals: 6, symbol: 'USDC' } : undefined;
}

/** A standard requirement back in the `accepts` form the payment builder takes; `resource` the URL the proof names. */
export function acceptedFromStandard(s: PaymentRequirements, resource: string): AcceptedRequirement {
  const { programId, id, paymentFlow: _flow, ...terms } = s.extra ?? {};
  if (typeof id !== 'string' || id === '') throw new Error(`the ${s.scheme} requirement has no extra.id: it is not a Tributary requirement`);
  if (typeof programId !== 'string') throw new Error(`the ${s.scheme} requirement has no extra.programId: it is not a Tributary requirement`);
  return {
    ...terms, id, scheme: s.scheme as Scheme, network: s.network, amount: s.amount as unknown as number, recipient: s.payTo, tokenMint: s.asset,
    resource, maxTimeoutSeconds: s.maxTimeoutSeconds, extra: { programId, x402Version: X402_VERSION },
  } as AcceptedRequirement;
}

/** The client plugin of one Tributary scheme, paying with `wallet` (payer and fee payer). */
export function tributaryClientScheme(scheme: Scheme, wallet: Keypair, opts: TributaryClientOptions): SchemeNetworkClient {
  if (!(SCHEMES as readonly string[]).includes(scheme)) throw new Error(`scheme must be one of ${SCHEMES.join(', ')}`);
  const rpc: RpcClient = createRpcClient({ url: opts.rpcUrl, timeoutMs: opts.rpcTimeoutMs ?? 10_000 });
  // the resource of the PaymentRequired each requirement object came from (the object @x402/core then hands createPaymentPayload)
  const resources = new WeakMap<PaymentRequirements, string>();
  return {
    scheme,
    findDefaultAsset: (asset) => findTributaryAsset(asset),
    schemeHooks: {
      onBeforePaymentCreation: async ({ paymentRequired, selectedRequirements }) => {
        resources.set(selectedRequirements, paymentRequired.resource.url);
      },
    },
    async createPaymentPayload(x402Version, requirements): Promise<PaymentPayloadResult> {
      if (x402Version !== X402_VERSION) throw new Error(`Tributary's ${scheme} is paid in x402 v${X402_VERSION}, not v${x402Version}`);
      const resource = resources.get(requirements);
      if (resource === undefined) throw new Error(`no resource known for this ${scheme} requirement: pay it through x402Client.createPaymentPayload`);
      const accepted = acceptedFromStandard(requirements, resource);
      const built = await buildPayment(accepted, { wallet, rpc, ...(opts.commitment ? { commitment: opts.commitment } : {}) });
      const spec = JSON.parse(Buffer.from(built.header, 'base64').toString('utf8')) as { payload: Record<string, unknown> };
      return { x402Version: X402_VERSION, payload: spec.payload };
    },
  };
}

/** The four Tributary schemes' client plugins; register each on 'solana:*' (or the one network you pay on). */
export function tributaryClientSchemes(wallet: Keypair, opts: TributaryClientOptions): SchemeNetworkClient[] {
  return SCHEMES.map((s) => tributaryClientScheme(s, wallet, opts));
}

/**
 * A standard PaymentPayload of a Tributary scheme presented again (another call of an MCP tool
 * under it, an answer lost), with a fresh proof by `wallet`: a proof is answered once
 * (spent-proofs.ts); the transaction stays the same bytes, sent once. Throws when the payload
 * names no Tributary requirement id or no resource.
 */
export function resignStandardPayload(wallet: Keypair, p: PaymentPayload): PaymentPayload {
  const requirementId = p.accepted.extra?.['id'];
  const resource = p.resource?.url;
  if (typeof requirementId !== 'string' || resource === undefined) throw new Error('the payload names no Tributary requirement (extra.id) or no resource');
  const body = resignPayment(p.payload as unknown as PaymentBody, wallet, { requirementId, resource });
  return { ...p, payload: body };
}
