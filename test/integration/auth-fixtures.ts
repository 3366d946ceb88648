/**
 * Givens for the signing-key, sign-in and token tests: gateways, payment policies and
 * payments written to the real read-model and archive tables of a test database, wallets
 * with real ed25519 keys, and a clock the test moves.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import bs58 from 'bs58';
import { expect } from 'chai';
import type { Db } from '../../infra/postgres/database.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { eventId, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import type { AppContext } from '../../src/app/context.js';
import type { Clock } from '../../src/kernel/domain/clock.js';

export interface MovableClock extends Clock { set(ms: number): void; advance(seconds: number): void }

export function movableClock(start = Date.now()): MovableClock {
  let t = start;
  return { now: () => t, set: (ms) => { t = ms; }, advance: (s) => { t += s * 1000; } };
}

export interface Wallet { address: string; secretKey: Uint8Array }

export async function newWallet(): Promise<Wallet> {
  const secretKey = ed.utils.randomSecretKey();
  return { address: bs58.encode(await ed.getPublicKeyAsync(secretKey)), secretKey };
}

export const randomKey = (): string => bs58.encode(randomBytes(32));
export const randomSignature = (): string => {
  for (;;) {
    const s = bs58.encode(randomBytes(64));
    if (s.length >= 87) return s;
  }
};

/** A gateway in the gateways read model; its address is a stand-in (the PDA does not matter here). */
export async function insertGateway(db: Db, authority: string, signer = authority): Promise<string> {
  const address = randomKey();
  await db.insertInto('gateways').values({
    address, authority, signer, fee_recipient: authority, fee_bps: 100, name: 'test', url: 'https://example.com',
    active: true, deleted: false, created_at: 1, updated_at: 1, deleted_at: null, created_slot: 1, created_signature: randomSignature(),
  }).execute();
  return address;
}

export interface PolicyGiven {
  owner: string;
  gateway: string;
  policyType: PolicyType;
  tokenMint?: string;
  recipient?: string;
  trackingId?: string;
  status?: 'Active' | 'Paused' | 'Completed';
  slot?: number;
  /** payments recorded on the policy (default 0: created, never paid); each is `amount` (1000 when the type has none) */
  paymentCount?: number;
}

let policyIds = 0;

export async function insertPolicy(db: Db, p: PolicyGiven): Promise<string> {
  const address = randomKey();
  const memo = Buffer.alloc(64);
  Buffer.from(p.trackingId ?? '', 'utf8').copy(memo);
  policyIds += 1;
  const paid = p.paymentCount ?? 0;
  const amount = 'amount' in p.policyType ? BigInt(p.policyType.amount) : 1000n;
  await db.insertInto('payment_policies').values({
    address, policy_id: policyIds, user_payment: randomKey(), owner: p.owner, token_mint: p.tokenMint ?? 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    gateway: p.gateway, recipient: p.recipient ?? randomKey(), variant: p.policyType.kind, policy_type: JSON.stringify(p.policyType),
    memo, tracking_id: p.trackingId ?? '', status: p.status ?? 'Active', total_paid: (amount * BigInt(paid)).toString(), total_output: null, extra: null,
    payment_count: paid, last_payment_at: null, last_payment_signature: null, next_payment_due: null, created_at: 1, updated_at: 1,
    created_slot: p.slot ?? policyIds, created_signature: randomSignature(), deleted: false, deleted_at: null,
  }).execute();
  return address;
}

export interface PaymentGiven { payer: string; policy: string; gateway: string; timestamp: number; amount?: string; tokenMint?: string; recipient?: string; trackingId?: string }

let slots = 10_000;

/** A PaymentRecord in the archive, written by the archive projection itself. */
export async function insertPayment(db: Db, p: PaymentGiven): Promise<string> {
  const signature = randomSignature();
  slots += 1;
  const e: TributaryEvent = {
    id: eventId(signature, '0', 0), name: 'PaymentRecord', signature, slot: slots, blockTime: p.timestamp, ixPath: '0', index: 0,
    data: {
      payment_policy: p.policy, gateway: p.gateway, amount: p.amount ?? '1000', timestamp: String(p.timestamp),
      memo: p.trackingId ?? '', memo_hex: Buffer.concat([Buffer.from(p.trackingId ?? ''), Buffer.alloc(64 - Buffer.byteLength(p.trackingId ?? ''))]).toString('hex'),
      record_id: slots, payer: p.payer, recipient: p.recipient ?? randomKey(), token_mint: p.tokenMint ?? 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    },
  };
  await db.transaction().execute((trx) => archiveProjection.apply(trx, [e]));
  return signature;
}

export const subscription = (nextDue: number): PolicyType => ({
  kind: 'Subscription', amount: '1000000', auto_renew: true, max_renewals: null, payment_frequency: 'Monthly', next_payment_due: String(nextDue),
});

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** Asserts SPEC's error envelope with the status, and returns its message. */
export async function expectError(res: Response, status: number): Promise<string> {
  const body = (await res.json()) as { error?: unknown; success?: unknown; timestamp?: unknown };
  expect(res.status, JSON.stringify(body)).to.equal(status);
  expect(body.success).to.equal(false);
  expect(body.error).to.be.a('string');
  expect(body.timestamp).to.be.a('number');
  return String(body.error);
}

/** Gateway sign-in over HTTP: challenge, sign the nonce's UTF-8 bytes, verify. */
export async function signIn(baseUrl: string, gateway: string, wallet: Wallet): Promise<{ token: string; expiresIn: number }> {
  const ch = await postJson(`${baseUrl}/v1/gateway/${gateway}/auth/challenge`, {});
  expect(ch.status).to.equal(200);
  const { nonce } = (await ch.json()) as { nonce: string };
  const signature = await ed.signAsync(new TextEncoder().encode(nonce), wallet.secretKey);
  const res = await postJson(`${baseUrl}/v1/gateway/${gateway}/auth/verify`, { signer: wallet.address, signature: Array.from(signature), nonce });
  expect(res.status).to.equal(200);
  return (await res.json()) as { token: string; expiresIn: number };
}

export const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Another node's context on the same services but other databases (a per-process metrics registry of its own). */
export function nodeWith(ctx: AppContext, dbs: Partial<Pick<AppContext, 'db' | 'dbRead'>>): AppContext {
  const { metrics: _own, ...rest } = ctx;
  return { ...rest, ...dbs };
}
