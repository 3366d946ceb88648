/**
 * What the plugin and Sign-In-With-X tests share: a merchant app selling deferred, payg and
 * prepaid on the standard wire (and the deferred on SPEC.md's) with Sign-In-With-X on, the
 * ecosystem's paying client with our plugins, and a wallet as @x402/extensions signs with.
 */
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Keypair } from '@solana/web3.js';
import { x402Client, wrapFetchWithPayment } from '@x402/fetch';
import { createSIWxClientExtension, type SIWxSigner } from '@x402/extensions/sign-in-with-x';
import { paymentRequired, x402Grant } from '../../commands/x402/middleware.js';
import type { PaymentRequirementInput } from '../../commands/x402/requirements.js';
import { tributaryClientSchemes } from '../../commands/x402/plugins/client.js';
import { signDetached } from '../../infra/crypto/ed25519.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { X402Harness } from './x402-harness.js';

export const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

/** The merchant's routes: one scheme each on the standard wire, and the subscription on SPEC.md's wire too. */
export const ROUTES = { deferred: '/sub', payg: '/payg', prepaid: '/credit', upto: '/upto', spec: '/sub-spec' } as const;

export interface Merchant { base: string; close(): Promise<void> }

export function requirementsOf(h: X402Harness): Record<'deferred' | 'payg' | 'prepaid' | 'upto', PaymentRequirementInput> {
  const gw = h.ln.fixtures.gateways[0]!;
  const common = { network: 'solana:localnet', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV };
  return {
    deferred: { ...common, scheme: 'deferred', amount: 1_000_000, paymentFrequency: 'Monthly', description: 'reports, monthly' },
    payg: { ...common, scheme: 'x402://payg', amount: 10_000, maxChunkAmount: 100_000, maxAmountPerPeriod: 1_000_000, description: 'metered reports' },
    prepaid: { ...common, scheme: 'x402://prepaid', amount: 500_000, pricePerRequest: 1000, description: 'reports from a credit' },
    upto: { ...common, scheme: 'x402://upto', amount: 500_000, maxTimeoutSeconds: 600, description: 'a report, up to 0.50' },
  };
}

export async function startMerchant(h: X402Harness): Promise<Merchant> {
  const ctx = h.api.ctx;
  const deps = {
    rpc: createRpcClient({ url: h.overrides['SOLANA_RPC_URL']!, timeoutMs: 5000 }), programId: PROGRAM_ID,
    redis: ctx.redis, redisPrefix: ctx.config.redis.prefix, signer: h.api.node.keyRing, cacheMs: 0,
  };
  const reqs = requirementsOf(h);
  const app = express();
  const serve: express.RequestHandler = (req, res) => { res.json({ content: `report at ${req.path}`, grant: x402Grant(res) }); };
  for (const scheme of ['deferred', 'payg', 'prepaid', 'upto'] as const) {
    app.all(ROUTES[scheme], paymentRequired([reqs[scheme]], deps, { wire: 'standard', signIn: true }), serve);
  }
  app.all(ROUTES.spec, paymentRequired([reqs.deferred], deps, { signIn: true }), serve);
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** The wallet as a Solana wallet adapter signs a sign-in message. */
export function walletSigner(wallet: Keypair): SIWxSigner {
  return { publicKey: wallet.publicKey.toBase58(), signMessage: async (m: Uint8Array) => signDetached(m, wallet.secretKey) };
}

/** @x402/fetch with our schemes paying as `wallet`; with `signIn`, the SIWX client extension of @x402/extensions too. */
export function paidFetch(h: X402Harness, wallet: Keypair, opts: { signIn?: boolean } = {}): typeof fetch {
  const client = new x402Client();
  for (const s of tributaryClientSchemes(wallet, { rpcUrl: h.ln.rpcUrl })) client.register('solana:*', s);
  if (opts.signIn) client.registerExtension(createSIWxClientExtension({ signers: [walletSigner(wallet)] }));
  return wrapFetchWithPayment(fetch, client);
}
