/**
 * What the money model's payers, merchant and operator do, one action at a time. A payer's
 * transaction may be answered with an error though it landed (the hostile localnet), so an
 * action never trusts its answer: intervals in which a payer could not be charged open when
 * the action starts and close only once the chain shows the state restored, and the checks
 * read the chain's own accounts and events.
 */
import { PublicKey } from '@solana/web3.js';
import { payAndFetch } from '../../src/app/index.js';
import { approveIx, revokeIx, transferIx, associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { accountOf, sendAs, setPolicyStatus } from './scheduler-chain.js';
import { DEMO_PATH } from './x402-harness.js';
import { draw, payCredit, type Prepaid } from './money-model-prepaid.js';
import { authorizeUpto, settleUpto, type Upto } from './money-model-upto.js';
import { close, count, newPayer, open, tokenState, type Kind, type ModelPolicy, type Payer, type World } from './money-model-world.js';

export const ACTION_WEIGHTS = {
  paySub: 3, payPayg: 3, bearer: 10, burst: 3, cutBearer: 2, pause: 2, resume: 2, revoke: 1, reapprove: 2, delete: 1, empty: 1, refill: 2,
  payCredit: 2, draw: 3, drawBurst: 2, cutDraw: 2, authorizeUpto: 2, settleUpto: 3, killScheduler: 1, startScheduler: 2, killSettler: 1, startSettler: 2, redisSnapshot: 1, redisRestore: 1, redisFlush: 1, wait: 4,
} as const;
export type Action = keyof typeof ACTION_WEIGHTS;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const live = (w: World, kind?: Kind): ModelPolicy[] => w.policies.filter((p) => p.deletedAt === undefined && (!kind || p.kind === kind));

/** Tries an instruction; a lost or erring answer is expected under faults (the chain is read afterwards). */
async function tryTx(w: World, what: string, f: () => Promise<unknown>): Promise<void> {
  try { await f(); } catch { count(w, `${what}-answer-lost`); }
}

async function pay(w: World, kind: Kind): Promise<void> {
  const mine = new Set(live(w, kind).map((p) => p.payer));
  const payer = w.rng.next() < 0.5 ? w.payers.find((p) => !mine.has(p)) ?? newPayer(w) : newPayer(w);
  const node = w.nodes[w.rng.int(0, 1)]!;
  try {
    const r = await payAndFetch(`${node}${DEMO_PATH}`, { wallet: payer.kp, rpcUrl: w.s.h.ln.rpcUrl, scheme: kind === 'sub' ? 'deferred' : 'x402://payg', rpcTimeoutMs: 5000 });
    if (r.paid?.policy && r.paid.jwt) w.policies.push({ address: r.paid.policy, kind, payer, jwt: r.paid.jwt });
    else count(w, 'pay-unanswered');
  } catch {
    count(w, 'pay-refused-or-lost');
  }
}

/**
 * A bearer call on `node`; `cutAfterMs`: the client gives up that soon, often while the request is
 * being metered (an unanswered request gives its chunk back: a hole the next request takes).
 */
async function bearer(w: World, p: ModelPolicy, node: number, cutAfterMs = 10_000): Promise<void> {
  const t0 = Date.now();
  let status = 0;
  let why: string | undefined;
  try {
    const r = await fetch(`${w.nodes[node]!}${DEMO_PATH}`, { headers: { authorization: `Bearer ${p.jwt}` }, signal: AbortSignal.timeout(cutAfterMs) });
    status = r.status;
    const body = await r.text();
    if (status !== 200) why = (() => { try { const e = (JSON.parse(body) as { error?: unknown }).error; return typeof e === 'string' ? e : body.slice(0, 200); } catch { return body.slice(0, 200); } })();
  } catch { status = 0; }
  w.samples.push({ policy: p.address, kind: p.kind, node, t0, t1: Date.now(), status, ...(why ? { why } : {}) });
}

async function setStatus(w: World, to: 'Paused' | 'Active'): Promise<void> {
  const candidates = live(w);
  if (candidates.length === 0) return;
  const p = w.rng.pick(candidates);
  await tryTx(w, to, () => setPolicyStatus(w.s.h.rpc, p.payer.kp, p.address, w.sub.tokenMint, to));
}

async function revoke(w: World): Promise<void> {
  const payer = w.rng.pick(w.payers);
  open(w, payer.userPayment, 'revoked');
  w.revokesInFlight.set(payer.userPayment, Date.now());
  await tryTx(w, 'revoke', () => sendAs(w.s.h.rpc, payer.kp, revokeIx(payer.ata, payer.kp.publicKey.toBase58())));
  // landed before anything else is sent for this payer: a revoke the hostile localnet delays could
  // otherwise land after the next reapprove, and the payer would be held able to pay while it cannot
  if (await settled(w, payer.ata, (t) => t.delegate === null)) w.revokesInFlight.delete(payer.userPayment);
}

async function reapprove(w: World): Promise<void> {
  const revoked = w.intervals.filter((i) => i.what === 'revoked' && i.to === undefined);
  if (revoked.length === 0) return;
  const key = w.rng.pick(revoked).key;
  await reapproveOf(w, w.payers.find((p) => p.userPayment === key)!);
}

async function reapproveOf(w: World, payer: Payer): Promise<void> {
  await tryTx(w, 'reapprove', () => sendAs(w.s.h.rpc, payer.kp, approveIx(payer.ata, payer.userPayment, payer.kp.publicKey.toBase58(), 10n ** 12n)));
  if ((await settled(w, payer.ata, (t) => t.delegate === payer.userPayment))) close(w, payer.userPayment, 'revoked');
}

async function settled(w: World, ata: string, ok: (t: { amount: bigint; delegate: string | null }) => boolean): Promise<boolean> {
  for (let i = 0; i < 20; i += 1) {
    const t = await tokenState(w, ata).catch(() => undefined);
    if (t && ok(t)) return true;
    await sleep(250);
  }
  return false;
}

async function remove(w: World): Promise<void> {
  const candidates = live(w);
  if (candidates.length === 0) return;
  const p = w.rng.pick(candidates);
  p.deletedAt = Date.now();
  const ix = await policyDeleteIx(w, p).catch(() => undefined);
  if (ix) await tryTx(w, 'delete', () => sendAs(w.s.h.rpc, p.payer.kp, ix));
}

async function policyDeleteIx(w: World, p: ModelPolicy): Promise<ReturnType<typeof tributaryIx>> {
  const mint = new PublicKey(w.sub.tokenMint);
  return tributaryIx('delete_payment_policy', {
    owner: p.payer.kp.publicKey, user_payment: new PublicKey(p.payer.userPayment), token_mint: mint, payment_policy: new PublicKey(p.address),
    config: pdas.config(), rent_payer: p.payer.kp.publicKey,
  }, { policy_id: Number((await accountOf(w.s.h.rpc, p.address))['policy_id']) });
}

async function empty(w: World): Promise<void> {
  const payer = w.rng.pick(w.payers);
  const t = await tokenState(w, payer.ata).catch(() => undefined);
  if (!t || t.amount === 0n) return;
  open(w, payer.userPayment, 'empty');
  const bankAta = associatedTokenAddress(w.bank.publicKey.toBase58(), w.sub.tokenMint);
  await tryTx(w, 'empty', () => sendAs(w.s.h.rpc, payer.kp, transferIx(payer.ata, bankAta, payer.kp.publicKey.toBase58(), t.amount)));
}

async function refill(w: World): Promise<void> {
  const emptied = w.intervals.filter((i) => i.what === 'empty' && i.to === undefined);
  if (emptied.length === 0) return;
  const key = w.rng.pick(emptied).key;
  await refillOf(w, w.payers.find((p) => p.userPayment === key)!);
}

async function refillOf(w: World, payer: Payer): Promise<void> {
  const bankAta = associatedTokenAddress(w.bank.publicKey.toBase58(), w.sub.tokenMint);
  await tryTx(w, 'refill', () => sendAs(w.s.h.rpc, w.bank, transferIx(bankAta, payer.ata, w.bank.publicKey.toBase58(), 10n ** 10n)));
  if (await settled(w, payer.ata, (t) => t.amount >= 10n ** 9n)) close(w, payer.userPayment, 'empty');
}

/** Redis as an older snapshot restored: the x402 keys (counters, markers) DUMPed earlier put back, those created since removed. */
async function redisRestore(w: World, flush: boolean): Promise<void> {
  const { redis, prefix } = w.s.h.env;
  const keys = await redis.keys(`${prefix}x402:*`);
  const back = flush ? new Map<string, Buffer>() : w.snapshot;
  if (!back) return;
  for (const k of keys) if (!back.has(k)) await redis.del(k);
  for (const [k, v] of back) await redis.restore(k, 0, v, 'REPLACE');
}

async function redisSnapshot(w: World): Promise<void> {
  const { redis, prefix } = w.s.h.env;
  const snap = new Map<string, Buffer>();
  for (const k of await redis.keys(`${prefix}x402:*`)) {
    const v = await redis.dumpBuffer(k);
    if (v) snap.set(k, v);
  }
  w.snapshot = snap;
}

/** Every payer made able to pay again (paused policies resumed, approves restored, wallets refilled): what waited is charged now. */
export async function restoreAll(w: World): Promise<void> {
  // a payer the chain shows without the delegate (a revoke that landed later than the model waited for, after
  // the reapprove that closed its interval) is revoked too, since that revoke was sent: the chain had no
  // delegate from its landing, some time after (the scheduler's attempts meanwhile failed NoDelegateSet)
  for (const payer of w.payers) {
    const t = await tokenState(w, payer.ata).catch(() => undefined);
    if (t && t.delegate !== payer.userPayment && !w.intervals.some((i) => i.key === payer.userPayment && i.what === 'revoked' && i.to === undefined)) {
      count(w, 'revoke-landed-late');
      open(w, payer.userPayment, 'revoked', w.revokesInFlight.get(payer.userPayment));
    }
  }
  for (const i of w.intervals.filter((x) => x.to === undefined && x.what === 'revoked')) {
    const payer = w.payers.find((p) => p.userPayment === i.key)!;
    for (let k = 0; k < 3 && i.to === undefined; k += 1) await reapproveOf(w, payer);
  }
  for (const i of w.intervals.filter((x) => x.to === undefined && x.what === 'empty')) {
    const payer = w.payers.find((p) => p.userPayment === i.key)!;
    for (let k = 0; k < 3 && i.to === undefined; k += 1) await refillOf(w, payer);
  }
  for (const p of live(w)) {
    for (let k = 0; k < 3; k += 1) {
      const status = await accountOf(w.s.h.rpc, p.address).then((a) => a['status'], () => undefined);
      if (status !== 'Paused') break;
      await tryTx(w, 'Active', () => setPolicyStatus(w.s.h.rpc, p.payer.kp, p.address, w.sub.tokenMint, 'Active'));
      await sleep(1500);
    }
  }
}

/** The next action: a payment while fewer than two policies of a kind live, else one drawn by weight. */
export function nextAction(w: World): Action {
  if (live(w, 'sub').length < 2 && w.rng.next() < 0.4) return 'paySub';
  if (live(w, 'payg').length < 2 && w.rng.next() < 0.4) return 'payPayg';
  return w.rng.weighted(ACTION_WEIGHTS);
}

export async function perform(w: World, a: Action, prepaid: Prepaid, upto: Upto): Promise<void> {
  count(w, a);
  switch (a) {
    case 'paySub': return pay(w, 'sub');
    case 'payPayg': return pay(w, 'payg');
    case 'bearer': { const ps = live(w); if (ps.length) await bearer(w, w.rng.pick(ps), w.rng.int(0, 1)); return; }
    case 'burst': {
      const ps = live(w, 'payg');
      if (ps.length) { const p = w.rng.pick(ps); await Promise.all([0, 1, 0, 1].map((n) => bearer(w, p, n))); }
      return;
    }
    case 'cutBearer': {
      // four concurrent calls of one pay-as-you-go policy, two of them given up within a few ms
      const ps = live(w, 'payg');
      if (ps.length) { const p = w.rng.pick(ps); await Promise.all([0, 1, 0, 1].map((n, i) => bearer(w, p, n, i % 2 ? w.rng.int(1, 15) : 10_000))); }
      return;
    }
    case 'payCredit': return payCredit(w, prepaid);
    case 'draw': return draw(w, prepaid, 1);
    case 'drawBurst': return draw(w, prepaid, 4);
    case 'cutDraw': return draw(w, prepaid, 4, () => w.rng.int(1, 15));
    case 'authorizeUpto': return authorizeUpto(w, upto);
    case 'settleUpto': return settleUpto(w, upto);
    case 'pause': return setStatus(w, 'Paused');
    case 'resume': return setStatus(w, 'Active');
    case 'revoke': return w.payers.length ? revoke(w) : undefined;
    case 'reapprove': return reapprove(w);
    case 'delete': return remove(w);
    case 'empty': return w.payers.length ? empty(w) : undefined;
    case 'refill': return refill(w);
    case 'killScheduler': if (w.scheduler) { open(w, 'service', 'scheduler-down'); await w.scheduler.stop(); w.scheduler = undefined; } return;
    case 'startScheduler': if (!w.scheduler) { w.scheduler = w.s.scheduler(); close(w, 'service', 'scheduler-down'); } return;
    case 'killSettler': if (w.settler) { open(w, 'service', 'settler-down'); await w.settler.stop(); w.settler = undefined; } return;
    case 'startSettler': if (!w.settler) { w.settler = w.s.settler(); close(w, 'service', 'settler-down'); } return;
    case 'redisSnapshot': return redisSnapshot(w);
    case 'redisRestore': return redisRestore(w, false);
    case 'redisFlush': return redisRestore(w, true);
    case 'wait': return sleep(w.rng.int(300, 2500));
  }
}
