/**
 * The money model's world: the scheduler harness (API node with the demo's `deferred` and
 * `x402://payg` routes, a second API node on the same database and Redis, indexer,
 * projectors, scheduler, settler) on a hostile localnet, the payers the run created, and
 * what the run saw: every bearer answer with its wall-clock times, every interval in which
 * a payer could not be charged (wallet empty, approve revoked, policy deleted) or the
 * scheduler or settler was down, and the payer accounts' unsettled usage, sampled after
 * each action.
 */
import { createHash } from 'node:crypto';
import { Keypair, PublicKey } from '@solana/web3.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { associatedTokenAddress, decodeTokenAccountState } from '../../src/kernel/domain/spl-token.js';
import { pdas } from '../../infra/localnet/keys.js';
import type { RunningScheduler } from '../../commands/scheduler/scheduler.js';
import type { RunningSettler } from '../../commands/settlement/settler.js';
import type { AcceptedRequirement } from '../../commands/x402/requirements.js';
import type { Rng } from './money-model-rng.js';
import { startSchedulerHarness, type SchedulerHarness } from './scheduler-harness.js';

export type Kind = 'sub' | 'payg';

export interface Payer { kp: Keypair; ata: string; userPayment: string }
export interface ModelPolicy { address: string; kind: Kind; payer: Payer; jwt: string; deletedAt?: number }
/** one bearer call: wall-clock milliseconds before and after, the node asked, the answer */
/** `why`: the start of a refusal's body */
export interface Sample { policy: string; kind: Kind; node: number; t0: number; t1: number; status: number; why?: string }
/** wall-clock milliseconds; `to` undefined while it lasts */
export interface Interval { key: string; what: string; from: number; to?: number }
export interface ExposureSample { at: number; userPayment: string; owed: bigint; bound: bigint }

export interface Terms {
  subPeriod: number; paygPeriod: number; price: number; maxChunk: number; perPeriod: number; maxUnsettled: number;
  settleThreshold: number; settleIntervalMs: number;
}

export interface World {
  seed: number;
  rng: Rng;
  s: SchedulerHarness;
  terms: Terms;
  nodes: string[];
  sub: AcceptedRequirement;
  payg: AcceptedRequirement;
  bank: Keypair;
  since: number;
  payers: Payer[];
  policies: ModelPolicy[];
  samples: Sample[];
  intervals: Interval[];
  exposure: ExposureSample[];
  counts: Record<string, number>;
  scheduler: RunningScheduler | undefined;
  settler: RunningSettler | undefined;
  snapshot: Map<string, Buffer> | undefined;
  /** when each payer's last revoke was sent, while the chain has not shown it landed (the hostile localnet delays some) */
  revokesInFlight: Map<string, number>;
  close(): Promise<void>;
}

/** The run's terms, drawn from its seed: short periods so several pass within a run. */
export function drawTerms(rng: Rng): Terms {
  const price = rng.pick([5_000, 10_000]);
  const maxChunk = price * rng.int(1, 3);
  return {
    subPeriod: rng.int(10, 20), paygPeriod: rng.int(15, 40), price, maxChunk, perPeriod: maxChunk * rng.int(4, 10),
    maxUnsettled: maxChunk * rng.int(1, 4), settleThreshold: rng.pick([1, price * 3]), settleIntervalMs: rng.int(400, 1500),
  };
}

export async function startWorld(seed: number, rng: Rng, faults: string): Promise<World> {
  const terms = drawTerms(rng);
  const s = await startSchedulerHarness(`model-${seed}`, {
    X402_DEMO_FREQUENCY: `Custom:${terms.subPeriod}`, X402_DEMO_AMOUNT: '100000', X402_DEMO_PAYG_PRICE: String(terms.price),
    X402_DEMO_PAYG_MAX_CHUNK: String(terms.maxChunk), X402_DEMO_PAYG_MAX_PER_PERIOD: String(terms.perPeriod),
    X402_DEMO_PAYG_PERIOD_SECONDS: String(terms.paygPeriod), X402_DEMO_PAYG_MAX_UNSETTLED: String(terms.maxUnsettled),
    PAYG_SETTLE_THRESHOLD: String(terms.settleThreshold), PAYG_SETTLE_INTERVAL_MS: String(terms.settleIntervalMs),
    PAYG_ROLLOVER_MARGIN_SECONDS: '3', X402_PAYG_RESERVATION_SECONDS: '30', SCHEDULER_DUNNING_SCHEDULE: '2s,4s,60s',
  }, { faults, faultsSeed: `model-${seed}` });
  const second = await s.h.secondNode();
  const accepts = await s.h.accepts();
  const find = (scheme: string): AcceptedRequirement => {
    const r = accepts.find((a) => a.scheme === scheme);
    if (!r) throw new Error(`the demo offers no ${scheme}`);
    return r;
  };
  const w: World = {
    seed, rng, s, terms, nodes: [s.h.api.url, second.url], sub: find('deferred'), payg: find('x402://payg'), bank: Keypair.generate(),
    since: Math.floor(Date.now() / 1000) - 5, payers: [], policies: [], samples: [], intervals: [], exposure: [], counts: {},
    scheduler: s.scheduler(), settler: s.settler(), snapshot: undefined, revokesInFlight: new Map(),
    async close() { await s.close(); },
  };
  w.bank = seededWallet(w, 'bank');
  return w;
}

/** A funded wallet drawn from the run's seed, so a replay has the same payers and policy addresses. */
function seededWallet(w: World, name: string): Keypair {
  const kp = Keypair.fromSeed(createHash('sha256').update(`money-model:${w.seed}:${name}`).digest());
  fundWallet(w.s.h.ln.chain, kp.publicKey);
  return kp;
}

export function newPayer(w: World): Payer {
  const kp = seededWallet(w, `payer-${w.payers.length}`);
  const mint = new PublicKey(w.sub.tokenMint);
  const p = { kp, ata: associatedTokenAddress(kp.publicKey.toBase58(), w.sub.tokenMint), userPayment: pdas.userPayment(kp.publicKey, mint).toBase58() };
  w.payers.push(p);
  return p;
}

export function count(w: World, what: string): void {
  w.counts[what] = (w.counts[what] ?? 0) + 1;
}

/** Opens the interval `what` of `key` (from now, or from `from`, ms) unless one is open. */
export function open(w: World, key: string, what: string, from = Date.now()): void {
  if (!w.intervals.some((i) => i.key === key && i.what === what && i.to === undefined)) w.intervals.push({ key, what, from });
}

export function close(w: World, key: string, what: string): void {
  for (const i of w.intervals) if (i.key === key && i.what === what && i.to === undefined) i.to = Date.now();
}

export async function tokenState(w: World, ata: string): Promise<{ amount: bigint; delegate: string | null; delegatedAmount: bigint } | undefined> {
  const r = await w.s.h.rpc.call<{ value: { data: [string, string] } | null }>('getAccountInfo', [ata, { encoding: 'base64', commitment: 'confirmed' }]);
  return r.value ? decodeTokenAccountState(Buffer.from(r.value.data[0], 'base64')) : undefined;
}

/** The payer accounts' usage admitted and not charged on chain yet, each against the requirement's bound. */
export async function sampleExposure(w: World): Promise<void> {
  const rows = await w.s.h.env.db.selectFrom('payg_usage as u')
    .leftJoin('payg_charges as c', 'c.id', 'u.charge_id')
    .select((eb) => ['u.user_payment', eb.fn.sum<string>('u.chunk').as('owed')])
    .where('u.unbillable_reason', 'is', null)
    .where((eb) => eb.or([eb('u.charge_id', 'is', null), eb('c.status', '!=', 'executed')]))
    .groupBy('u.user_payment')
    .execute();
  const at = Date.now();
  for (const r of rows) w.exposure.push({ at, userPayment: String(r.user_payment), owed: BigInt(r.owed), bound: BigInt(w.payg.maxUnsettledAmount ?? 0) });
}
