/** What the facilitator tests share: a gateway JWT for a localnet fixture gateway, and JSON calls. */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are inspected field by field */
import { expect } from 'chai';
import { Transaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import type { X402Harness } from './x402-harness.js';

export async function gatewayJwt(h: X402Harness, gateway: string, signer: string): Promise<string> {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  return (await h.api.node.keyRing.sign({ role: 'gateway', signer }, { subject: gateway, expiresAt: exp })).token;
}

export interface Answer { status: number; body: any }

/** `timeoutMs`: the caller gives up that soon (the request aborted). */
export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(timeoutMs !== undefined ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The Payment header's JSON, as a facilitator request carries it. */
export const payloadOf = (header: string): any => JSON.parse(Buffer.from(header, 'base64').toString('utf8'));

const USDC_DEV = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

/**
 * An API key of the localnet's fixture gateway `gw` (minted with its gateway JWT), and an
 * `x402://upto` requirement of `maximum` registered with it for a merchant's resource.
 */
export async function registerUpto(
  h: X402Harness, gw: { address: string; authority: string }, maximum: bigint, opts: { recipient?: string; description?: string } = {},
): Promise<{ key: string; upto: any }> {
  const jwt = await gatewayJwt(h, gw.address, gw.authority);
  const key: string = (await call(h.api.url, 'POST', `/v1/gateway/${gw.address}/api-keys`, {}, { authorization: `Bearer ${jwt}` })).body.key;
  const reg = await call(h.api.url, 'PUT', '/v1/x402/resources', {
    resource: 'https://merchant.example/completions', ...(opts.description !== undefined ? { description: opts.description } : {}), accepts: [{
      scheme: 'x402://upto', network: 'solana:localnet', amount: maximum.toString(), recipient: opts.recipient ?? gw.authority, gateway: gw.address,
      tokenMint: USDC_DEV, maxTimeoutSeconds: 600,
    }],
  }, { 'x-api-key': key });
  expect(reg.status, JSON.stringify(reg.body)).to.equal(200);
  return { key, upto: reg.body.accepts[0] };
}

/** One instruction signed and sent by `signer`, without waiting for it. */
export async function sendInstruction(h: X402Harness, signer: Keypair, ix: TransactionInstruction): Promise<void> {
  const { value } = await h.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{}]);
  const tx = new Transaction({ feePayer: signer.publicKey, recentBlockhash: value.blockhash }).add(ix);
  tx.sign(signer);
  await h.rpc.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }]);
}
