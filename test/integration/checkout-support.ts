/**
 * What the checkout tests share: the x402 harness (an in-process localnet, an API node) and
 * a second API node serving the checkout routes, the webhook routes and Socket.IO on the
 * same database, prefix and chain, its clock movable (sessions expire); a fixture gateway's
 * API key; and the payer's side as a wallet does it: ask for the transaction, sign it, sign
 * the proof message with the transaction's signature filled in, pay.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { Keypair, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { signDetached } from '../../infra/crypto/ed25519.js';
import { registerApiKeyRoutes } from '../../commands/api-keys/routes.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { registerCheckout } from '../../src/app/checkout.js';
import { registerSkillRoutes } from '../../queries/skill/routes.js';
import { exactRealtimeAttachment } from '../../src/app/x402-exact.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startX402, type X402Harness } from './x402-harness.js';
import { call, type Answer } from './x402-facilitator-support.js';
import { expect } from 'chai';
import { createLogger } from '../../infra/log/logger.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { startWebhookWorker, type WebhookWorker } from '../../commands/webhooks/delivery/worker.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { connectClient, type TestClient } from '../support/realtime-client.js';

export const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const ADMIN = 'checkout-test-admin-key-0123456789abcdef';

export interface CheckoutHarness {
  h: X402Harness;
  api: TestApi;
  /** the fixture gateway's API key */
  key: string;
  gw: { address: string; authority: string };
  /** moves the checkout node's clock */
  shift(ms: number): void;
  nowMs(): number;
  merchant(method: string, path: string, body?: unknown): Promise<Answer>;
  anyone(method: string, path: string, body?: unknown): Promise<Answer>;
  /** a deferred requirement of the fixture gateway, as an accepts entry */
  deferred(over?: Record<string, unknown>): Record<string, unknown>;
  create(over?: Record<string, unknown>): Promise<Answer>;
  close(): Promise<void>;
}

export async function startCheckout(tag: string, extra: Record<string, string> = {}): Promise<CheckoutHarness> {
  let offset = 0;
  const clock = { now: () => Date.now() + offset };
  const h = await startX402(tag, { ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...extra });
  const api = await startTestApi(h.env, { ...h.overrides, ADMIN_API_KEY: ADMIN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...extra }, {
    clock, modules: [registerApiKeyRoutes, registerWebhookRoutes, registerCheckout, registerSkillRoutes], attachments: [exactRealtimeAttachment()],
  });
  const gw = h.ln.fixtures.gateways[0]!;
  const jwt = (await api.node.keyRing.sign({ role: 'gateway', signer: gw.authority }, { subject: gw.address, expiresAt: Math.floor(Date.now() / 1000) + 3600 })).token;
  const key: string = (await call(api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
  const deferred = (over: Record<string, unknown> = {}) => ({
    scheme: 'deferred', network: 'solana:localnet', amount: '0.001', recipient: gw.authority, gateway: gw.address, tokenMint: USDC_DEV,
    paymentFrequency: 'Monthly', ...over,
  });
  const merchant = (method: string, path: string, body?: unknown) => call(api.url, method, path, body, { 'x-api-key': key });
  return {
    h, api, key, gw, deferred, merchant,
    shift: (ms) => { offset += ms; },
    nowMs: () => clock.now(),
    anyone: (method, path, body) => call(api.url, method, path, body),
    create: (over = {}) => merchant('POST', '/v1/checkout/sessions', {
      requirement: deferred(), trackingId: `order-${Math.random().toString(36).slice(2, 10)}`,
      successUrl: 'https://merchant.example/thanks?order=1', cancelUrl: 'https://merchant.example/cart', ...over,
    }),
    close: async () => { await api.close(); await h.close(); },
  };
}

/** What a wallet does on the page: sign the transaction, then the proof message with its signature. */
export function signAsWallet(answer: any, wallet: Keypair): { transaction: string; proof: { signedAt: number; signature: string }; signature: string } {
  const tx = VersionedTransaction.deserialize(Buffer.from(answer.transaction as string, 'base64'));
  tx.sign([wallet]);
  const signature = bs58.encode(tx.signatures[0]!);
  const message = (answer.proof.template as string).replace('{signature}', signature);
  const proof = { signedAt: answer.proof.signedAt as number, signature: bs58.encode(signDetached(new TextEncoder().encode(message), wallet.secretKey)) };
  return { transaction: Buffer.from(tx.serialize()).toString('base64'), proof, signature };
}

/** transaction, sign, pay: the page's three steps. */
export async function payAsWallet(c: CheckoutHarness, id: string, wallet: Keypair): Promise<{ answer: Answer; signature: string }> {
  const t = await c.anyone('POST', `/v1/checkout/sessions/${id}/transaction`, { payer: wallet.publicKey.toBase58() });
  if (t.status !== 200) return { answer: t, signature: '' };
  const signed = signAsWallet(t.body, wallet);
  const answer = await c.anyone('POST', `/v1/checkout/sessions/${id}/pay`, { transaction: signed.transaction, proof: signed.proof });
  return { answer, signature: signed.signature };
}

/** A checkout harness with the merchant's listeners: a webhook receiver and its worker, and a socket on the lifecycle events. */
export interface ListenedCheckout { c: CheckoutHarness; receiver: Receiver; worker: WebhookWorker; client: TestClient; lifecycle: any[] }

export async function startListenedCheckout(tag: string): Promise<ListenedCheckout> {
  const c = await startCheckout(tag);
  const receiver = await startReceiver();
  const hook = await call(c.api.url, 'POST', '/v1/webhooks', { gateway_pubkey: c.gw.authority, endpoint_url: receiver.url }, { 'x-admin-key': ADMIN });
  expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
  const config = c.api.ctx.config;
  const worker = startWebhookWorker({ config: { ...config, webhooks: { ...config.webhooks, pollMs: 50 } }, db: c.h.env.db, logger: createLogger('silent', 'wh'), clock: systemClock });
  const client = await connectClient(c.api.url);
  const lifecycle: any[] = [];
  client.socket.on('lifecycle', (m: unknown) => lifecycle.push(m));
  return { c, receiver, worker, client, lifecycle };
}
