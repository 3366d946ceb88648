/**
 * x402://upto in the money model: a maximum authorized through the facilitator, then the
 * merchant (the policy's recipient) settles an amount of the seed's choosing through
 * /v1/x402/usage with its own execute_payment, sometimes twice, sometimes above the maximum.
 * The check, from the chain: each UpTo policy paid at most once, never above its maximum.
 */
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { buildPayment } from '../../commands/x402/payment-transaction.js';
import { buildUptoSettlement } from '../../commands/x402/upto.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import type { ChainPolicy } from './money-model-chain.js';
import type { Violation } from './money-model-checks.js';
import type { Prepaid } from './money-model-prepaid.js';
import { count, newPayer, type World } from './money-model-world.js';
import { call, payloadOf } from './x402-facilitator-support.js';

export interface Upto { requirement: AcceptedRequirement; key: string; merchant: Keypair; authorized: { policy: string; jwt: string }[] }

export async function setupUpto(w: World, p: Prepaid): Promise<Upto> {
  const gw = w.s.h.ln.fixtures.gateways[0]!;
  const reg = await call(w.nodes[0]!, 'PUT', '/v1/x402/resources', {
    resource: 'https://merchant.example/model-upto', description: 'the money model\'s upto resource', accepts: [{
      scheme: 'x402://upto', network: w.sub.network, recipient: gw.authority, gateway: gw.address, tokenMint: w.sub.tokenMint,
      amount: String(w.terms.price * w.rng.int(2, 6)), maxTimeoutSeconds: 600,
    }],
  }, { 'x-api-key': p.key });
  if (reg.status !== 200) throw new Error(`the upto resource was refused: ${JSON.stringify(reg.body)}`);
  return { requirement: reg.body.accepts[0] as AcceptedRequirement, key: p.key, merchant: Keypair.fromSecretKey(bs58.decode(gw.authoritySecretKey)), authorized: [] };
}

export async function authorizeUpto(w: World, u: Upto): Promise<void> {
  const payer = newPayer(w);
  try {
    const built = await buildPayment(u.requirement, { wallet: payer.kp, rpc: w.s.h.rpc });
    const r = await call(w.nodes[w.rng.int(0, 1)]!, 'POST', '/v1/x402/settle', { paymentPayload: payloadOf(built.header), paymentRequirements: u.requirement }, { 'x-api-key': u.key });
    if (r.body?.success === true) u.authorized.push({ policy: r.body.policy as string, jwt: r.body.jwt as string });
    else count(w, 'upto-refused');
  } catch {
    count(w, 'upto-answer-lost');
  }
}

/** The merchant settles an authorized maximum: usually within it, sometimes above it; a settled one may be tried again. */
export async function settleUpto(w: World, u: Upto): Promise<void> {
  if (u.authorized.length === 0) return;
  const a = w.rng.pick(u.authorized);
  const max = BigInt(u.requirement.amount);
  const amount = w.rng.next() < 0.2 ? max + 1n : BigInt(w.rng.int(1, Number(max)));
  try {
    const { serializedTransaction } = await buildUptoSettlement({ rpc: w.s.h.rpc, programId: PROGRAM_ID, policy: a.policy, amount, signer: u.merchant });
    const r = await call(w.nodes[w.rng.int(0, 1)]!, 'POST', '/v1/x402/usage',
      { jwt: a.jwt, paymentRequirements: u.requirement, amount: amount.toString(), transaction: serializedTransaction }, { 'x-api-key': u.key });
    count(w, r.body?.settled ? 'upto-settled' : 'upto-settle-refused');
  } catch {
    count(w, 'upto-settle-lost');
  }
}

export function uptoViolations(u: Upto, chain: Map<string, ChainPolicy>): Violation[] {
  const out: Violation[] = [];
  const max = BigInt(u.requirement.amount);
  for (const p of [...chain.values()].filter((x) => x.kind === 'UpTo')) {
    if (p.records.length > 1) out.push({ invariant: 'upto settled at most once', policy: p.address, expected: '≤ 1 payment', found: p.records.map((r) => String(r.amount)).join(',') });
    for (const r of p.records) if (r.amount > max) out.push({ invariant: 'upto never settled above the maximum', policy: p.address, expected: `≤ ${max}`, found: String(r.amount) });
  }
  return out;
}
