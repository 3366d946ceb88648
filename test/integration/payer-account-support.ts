/**
 * What the payer account tests share: an API node with the payer account's routes beside
 * the scheduler harness's, a wallet signing in over HTTP with @noble/ed25519, and the
 * unsigned transactions the API answers signed by the payer's keypair.
 */
import * as ed from '@noble/ed25519';
import { expect } from 'chai';
import { Transaction, type Keypair } from '@solana/web3.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { registerSigningRoutes } from '../../src/app/signing-routes.js';
import { registerPayerAccountRoutes } from '../../commands/payer-account/routes.js';
import { registerMeRoutes } from '../../queries/me/routes.js';
import type { X402Harness } from './x402-harness.js';

export function startMeApi(h: X402Harness): Promise<TestApi> {
  return startTestApi(h.env, h.overrides, { modules: [registerSigningRoutes, registerPayerAccountRoutes, registerMeRoutes] });
}

export interface Reply { status: number; body: any } // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON bodies are inspected field by field

export async function call(api: TestApi, method: 'GET' | 'POST', path: string, opts: { token?: string; body?: unknown } = {}): Promise<Reply> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

export const signText = async (text: string, wallet: Keypair): Promise<number[]> =>
  Array.from(await ed.signAsync(new TextEncoder().encode(text), wallet.secretKey.slice(0, 32)));

/** challenge, sign, verify: the payer JWT */
export async function signIn(api: TestApi, wallet: Keypair): Promise<string> {
  const address = wallet.publicKey.toBase58();
  const ch = await call(api, 'POST', '/v1/me/auth/challenge', { body: { wallet: address } });
  expect(ch.status, JSON.stringify(ch.body)).to.equal(200);
  const v = await call(api, 'POST', '/v1/me/auth/verify', { body: { wallet: address, nonce: ch.body.nonce, signature: await signText(ch.body.nonce, wallet) } });
  expect(v.status, JSON.stringify(v.body)).to.equal(200);
  return v.body.token as string;
}

/** The unsigned transaction of an answer, signed by the wallet, as base64. */
export function signUnsigned(base64: string, wallet: Keypair): string {
  const tx = Transaction.from(Buffer.from(base64, 'base64'));
  tx.sign(wallet);
  return tx.serialize().toString('base64');
}

/** Asks for the action's transaction, signs it with the wallet and sends it: the relay's answer. */
export async function act(api: TestApi, token: string, wallet: Keypair, path: string, body?: unknown): Promise<Reply> {
  const built = await call(api, 'POST', path, { token, ...(body !== undefined ? { body } : {}) });
  expect(built.status, JSON.stringify(built.body)).to.equal(200);
  return call(api, 'POST', '/v1/me/transactions', { token, body: { transaction: signUnsigned(built.body.transaction, wallet) } });
}
