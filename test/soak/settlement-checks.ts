/**
 * The soak's two settlement checks, once the payment traffic has stopped at the cut
 * (cutS), the scheduler role has executed everything due by then and has been stopped,
 * and the pipeline has drained:
 *
 * due payments executed exactly once (every served policy of a scheduled variant):
 *   - its PaymentRecords in the chain's ledger are record ids 1..n, n = payment_count on chain;
 *   - nothing was due at the cut and left unpaid, unless the scheduler settled it with a
 *     reason that holds for a due policy (past due, given up, expired, not this signer's);
 *   - fixed-period subscriptions: each payment after the first paid the first due date
 *     after the one before (the program skips missed periods), never before it was due.
 *     A period skipped (a payment more than a period late) fails the check, the first
 *     scheduled payment's and one during a fault (its kill, a PostgreSQL restart, the
 *     localnet answering nothing for over 2 s; plus its lease) included: the scheduler
 *     derives the first due date from the chain and catches up after a restart, so each
 *     is counted, apart, only to say where it happened;
 *   - every executed intent's signature is one of the policy's PaymentRecords, and every
 *     PaymentRecord is an executed intent's, except the first payment made in the
 *     Payment transaction that created the policy.
 * metered chunks charged exactly once (every pay-as-you-go policy with usage):
 *   - no usage unsettled after the drain (unbillable rows are counted with their reason);
 *   - every executed charge's amount is the sum of its chunks and is the PaymentRecord of
 *     its signature (same amount, record id); no failed charge's signature landed;
 *   - every PaymentRecord of the policy is one executed charge, so what the chain charged
 *     equals the chunks charged;
 *   - the bearers' answered calls x price <= metered <= calls made x price.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { servedSql } from '../../commands/settlement/served-marks.js';
import { calendarMonths } from '../../src/kernel/domain/calendar.js';
import { frequencySeconds } from '../../src/kernel/domain/frequency.js';
import type { Check } from './checks.js';
import { dueBy, readPolicies, SCHEDULED, type ChainRecord, type PolicyOnChain, type ServedPolicy } from './settlement-chain.js';
import type { LostCall, PaygCounts } from './settlement-load.js';

/**
 * Whether an intent ended its due payment with the chain's reason, for a policy the chain
 * still shows Active and due: past due or given up (the payer cannot pay), or dropped for
 * a reason that holds for a due policy (expired, a milestone only its owner may release).
 * Dropped as not due, paused or completed contradicts the chain: the payment was lost.
 */
function settledWithReason(i: IntentRow): boolean {
  if (i.status === 'past_due' || i.status === 'given_up') return true;
  return i.status === 'dropped' && !['PaymentNotDue', 'PolicyPaused', 'PolicyCompleted', ''].includes(i.reason_code ?? '');
}

/** lag: due -> executed of the payments whose due date the scheduler knew from the one before; first: of the first scheduled payments */
export interface ScheduleFigures { executed: number; lagP50: number; lagP99: number; lagMax: number; firstLagP50: number; firstLagMax: number; skipped: number; skippedInFaults: number; skippedFirst: number }

interface IntentRow { policy: string; due_at: string; status: string; signature: string | null; last_reason: string | null; reason_code: string | null }

/** Every intent with the reason code of its last attempt. */
const intentsOf = async (db: Db): Promise<IntentRow[]> => (await sql<IntentRow>`
  SELECT i.policy, i.due_at::text AS due_at, i.status, i.signature, i.last_reason,
    (SELECT a.reason_code FROM execution_attempts a WHERE a.intent_id = i.id ORDER BY a.id DESC LIMIT 1) AS reason_code
  FROM execution_intents i`.execute(db)).rows;

/** Due payments not yet executed or settled with a reason: the drain's condition. */
export async function dueLeft(db: Db, rpcUrl: string, policies: readonly ServedPolicy[], cutS: number): Promise<{ left: number; detail: string }> {
  const chain = await readPolicies(rpcUrl, policies.filter((p) => SCHEDULED.has(p.variant)).map((p) => p.address));
  const intents = await intentsOf(db);
  const due = dueBy(policies, chain, cutS).filter((d) => !intents.some((i) => i.policy === d.policy.address && Number(i.due_at) === d.due && settledWithReason(i)));
  return { left: due.length, detail: due.slice(0, 5).map((d) => `${d.policy.address} due ${d.due}`).join(', ') };
}

/**
 * A reservation (a row no served mark covers) this old will not be covered any more: its
 * request ended unanswered or its process died (a mark is written within milliseconds of the
 * answer, or as soon as Postgres is back). The settler drops it at its bound, uncharged; the
 * drain does not wait for it.
 */
const ABANDONED_SECONDS = 60;

/** Metered usage not charged (nor unbillable, nor a reservation abandoned) and charges in flight: the drain's condition. */
export async function unsettledLeft(db: Db): Promise<number> {
  const usage = await db.selectFrom('payg_usage').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('charge_id', 'is', null).where('unbillable_reason', 'is', null)
    .where((eb) => eb.or([servedSql('payg_usage'), eb('metered_at', '>', sql<Date>`now() - make_interval(secs => ${ABANDONED_SECONDS})`)]))
    .executeTakeFirstOrThrow();
  const sending = await db.selectFrom('payg_charges').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'sending').executeTakeFirstOrThrow();
  return Number(usage.n) + Number(sending.n);
}

/** Scheduled payments sent and not resolved (landed, or proven never to land): the drain's condition, as the reconciliation's in doubt. */
export async function inDoubtLeft(db: Db): Promise<number> {
  return Number((await db.selectFrom('execution_intents').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'sending').executeTakeFirstOrThrow()).n);
}

const pct = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

export async function scheduleCheck(
  db: Db, o: {
    policies: readonly ServedPolicy[]; chain: ReadonlyMap<string, PolicyOnChain>; records: ReadonlyMap<string, ChainRecord[]>; cutS: number;
    subscriptions: readonly string[]; faults: readonly { name: string; from: number; to: number }[]; slackMs: number;
  },
): Promise<{ check: Check; figures: ScheduleFigures }> {
  const problems: string[] = [];
  const intents = await intentsOf(db);
  const executedSigs = new Map<string, Set<string>>();
  for (const i of intents) if (i.status === 'executed' && i.signature) executedSigs.set(i.policy, (executedSigs.get(i.policy) ?? new Set()).add(i.signature));
  const lags: number[] = [];
  const firstLags: number[] = [];
  let skipped = 0;
  let skippedInFaults = 0;
  let skippedFirst = 0;
  let executed = 0;
  let payments = 0;
  const stopping = o.faults.filter((w) => /scheduler|PostgreSQL|chain/.test(w.name));
  const inFault = (fromS: number, toS: number) => stopping.some((w) => fromS * 1000 <= w.to + o.slackMs && toS * 1000 >= w.from);
  // a user payment deleted and created again restarts its policy ids: one address, several policies, their records under one key
  const creators = new Map<string, Set<string>>();
  for (const p of o.policies) creators.set(p.address, (creators.get(p.address) ?? new Set()).add(p.createdBy));
  const scheduled = o.policies.filter((p, i) => SCHEDULED.has(p.variant) && o.policies.findIndex((q) => q.address === p.address) === i);
  for (const p of scheduled) {
    // an address that named several policies (here or at an unserved gateway) holds the records of each: not one schedule
    if ((creators.get(p.address)?.size ?? 0) > 1 || p.incarnations > 1) continue;
    const c = o.chain.get(p.address);
    const recs = o.records.get(p.address) ?? [];
    payments += recs.length;
    if (c && recs.length !== c.paymentCount) problems.push(`${p.address}: ${recs.length} PaymentRecords, payment_count ${c.paymentCount}`);
    if (recs.some((r, k) => r.recordId !== k + 1)) problems.push(`${p.address}: record ids ${recs.map((r) => r.recordId).join(',')} (a period paid twice or a record lost)`);
    const mine = executedSigs.get(p.address) ?? new Set<string>();
    executed += mine.size;
    for (const s of mine) if (!recs.some((r) => r.signature === s)) problems.push(`${p.address}: executed intent ${s} has no PaymentRecord`);
    for (const r of recs) {
      if (!mine.has(r.signature) && !(r.recordId === 1 && r.signature === p.createdBy)) problems.push(`${p.address}: PaymentRecord ${r.recordId} (${r.signature}) is no executed intent's`);
    }
    if (c?.type.kind !== 'Subscription' || calendarMonths(c.type.payment_frequency) !== undefined) continue;
    // fixed steps: every due date is on the grid of the chain's next due date
    const step = Number(frequencySeconds(c.type.payment_frequency));
    const last = Number(c.type.next_payment_due);
    for (let k = 1; k < recs.length; k += 1) {
      const prev = recs[k - 1]!.timestamp;
      const dueK = last - step * Math.floor((last - prev - 1) / step);
      const lag = recs[k]!.timestamp - dueK;
      if (lag < 0) { problems.push(`${p.address}: payment ${k + 1} at ${recs[k]!.timestamp}, before its due date ${dueK}`); continue; }
      (k === 1 ? firstLags : lags).push(lag);
      const missed = Math.floor(lag / step);
      if (missed === 0) continue;
      skipped += missed;
      if (k === 1) skippedFirst += missed;
      else if (inFault(dueK, recs[k]!.timestamp)) skippedInFaults += missed;
      problems.push(`${p.address}: payment ${k + 1} ${lag} s late skipped ${missed} period(s)${k === 1 ? ' (the first scheduled payment)' : inFault(dueK, recs[k]!.timestamp) ? ' during a fault' : ' while no fault was under way'}`);
    }
  }
  const chainNow = new Map(o.chain);
  const leftDue = dueBy(scheduled, chainNow, o.cutS);
  const reasons = new Map<string, number>();
  for (const d of leftDue) {
    const i = intents.find((x) => x.policy === d.policy.address && Number(x.due_at) === d.due);
    if (!i || !settledWithReason(i)) { problems.push(`${d.policy.address}: due ${d.due} <= cut ${o.cutS}, unpaid (intent ${i?.status ?? 'none'} ${i?.reason_code ?? ''})`); continue; }
    const why = `${i.status}: ${i.reason_code}`;
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  const soakPaid = o.subscriptions.map((s) => o.records.get(s)?.length ?? 0);
  if (o.subscriptions.length > 0 && soakPaid.some((n) => n < 2)) problems.push(`a soak subscription was never executed by the scheduler (payments ${soakPaid.join(',')})`);
  lags.sort((a, b) => a - b);
  firstLags.sort((a, b) => a - b);
  const figures: ScheduleFigures = {
    executed, lagP50: pct(lags, 50), lagP99: pct(lags, 99), lagMax: lags.at(-1) ?? 0, firstLagP50: pct(firstLags, 50), firstLagMax: firstLags.at(-1) ?? 0,
    skipped, skippedInFaults, skippedFirst,
  };
  return {
    figures,
    check: {
      name: 'due payments executed exactly once', ok: problems.length === 0 && executed > 0,
      detail: `${scheduled.length} served policies (${o.subscriptions.length} soak subscriptions paid ${soakPaid.join('/')} times), ${payments} PaymentRecords, ${executed} by the scheduler; due -> executed p50 ${figures.lagP50} s, p99 ${figures.lagP99} s, max ${figures.lagMax} s (first scheduled payments p50 ${figures.firstLagP50} s, max ${figures.firstLagMax} s); ${skipped} periods skipped (${skippedFirst} before the first scheduled payment, ${skippedInFaults} while the scheduler was stopped by a fault or the chain did not answer); due at the cut and settled with a reason: ${reasons.size ? JSON.stringify(Object.fromEntries(reasons)) : 'none'}${problems.length ? `; PROBLEMS (${problems.length}): ${problems.slice(0, 6).join('; ')}` : ''}`,
    },
  };
}

export async function paygCheck(
  db: Db, o: {
    records: ReadonlyMap<string, ChainRecord[]>; paygPolicies: readonly string[]; calls: ReadonlyMap<string, PaygCounts>; price: bigint;
    lost: readonly LostCall[]; faults: readonly { name: string; from: number; to: number }[];
  },
): Promise<Check> {
  const problems: string[] = [];
  const usage = await db.selectFrom('payg_usage').select(['request_id', 'policy', 'chunk', 'charge_id', 'unbillable_reason', 'metered_at', servedSql('payg_usage').as('served')]).execute();
  const charges = await db.selectFrom('payg_charges').selectAll().execute();
  const byId = new Map(charges.map((c) => [c.id, c]));
  const policies = new Set([...usage.map((u) => u.policy), ...o.paygPolicies]);
  let metered = 0n;
  let charged = 0n;
  let onChain = 0n;
  let unsettled = 0;
  const left: string[] = [];
  // requests an API node died serving: their rows stay reservations, dropped at their bound and never charged (docs/billing.md)
  let orphaned = 0;
  const killed = (at: number) => o.faults.some((w) => /kill -9 api/.test(w.name) && at >= w.from - 2000 && at <= w.to);
  const orphan = (u: (typeof usage)[number]) => u.charge_id === null && !u.served && killed(+new Date(u.metered_at));
  const unbillable = new Map<string, number>();
  const chunksOf = new Map<string, bigint>();
  for (const u of usage) {
    metered += BigInt(u.chunk);
    if (u.unbillable_reason !== null) { const k = u.unbillable_reason.split(':')[0]!; unbillable.set(k, (unbillable.get(k) ?? 0) + 1); continue; }
    if (orphan(u)) { orphaned += 1; continue; }
    if (u.charge_id === null) {
      unsettled += 1;
      left.push(`${u.request_id} of ${u.policy.slice(0, 8)} metered ${new Date(u.metered_at).toISOString()}${u.served ? ', served' : ', a reservation'}`);
      continue;
    }
    const c = byId.get(u.charge_id);
    if (c?.status !== 'executed') { problems.push(`usage in charge ${u.charge_id} (${c?.status ?? 'missing'})`); continue; }
    chunksOf.set(c.id, (chunksOf.get(c.id) ?? 0n) + BigInt(u.chunk));
    charged += BigInt(u.chunk);
  }
  if (unsettled > 0) problems.push(`${unsettled} chunks unsettled after the drain (${left.slice(0, 5).join('; ')})`);
  const executed = charges.filter((c) => c.status === 'executed');
  for (const c of charges) {
    const rec = (o.records.get(c.policy) ?? []).find((r) => r.signature === c.signature);
    if (c.status === 'failed' && rec) problems.push(`charge ${c.id} marked failed (${c.reason}) landed as record ${rec.recordId}: its usage may be charged twice`);
    if (c.status !== 'executed') continue;
    if ((chunksOf.get(c.id) ?? 0n) !== BigInt(c.amount)) problems.push(`charge ${c.id}: amount ${c.amount}, its chunks ${chunksOf.get(c.id) ?? 0n}`);
    if (!rec) problems.push(`charge ${c.id} executed, no PaymentRecord ${c.signature}`);
    else if (rec.amount !== BigInt(c.amount) || rec.recordId !== c.record_id) problems.push(`charge ${c.id}: record ${rec.recordId} ${rec.amount}, charge says ${c.record_id} ${c.amount}`);
  }
  const sigs = new Set(executed.map((c) => c.signature));
  for (const p of policies) {
    for (const r of o.records.get(p) ?? []) {
      onChain += r.amount;
      if (!sigs.has(r.signature)) problems.push(`${p}: PaymentRecord ${r.recordId} (${r.amount}) is no executed charge's`);
    }
  }
  if (onChain !== charged) problems.push(`charged on chain ${onChain}, chunks charged ${charged}`);
  let answered = 0;
  let sent = 0;
  let refusedCalls = 0;
  let failedCalls = 0;
  let unavailableCalls = 0;
  for (const p of o.paygPolicies) {
    const calls = o.calls.get(p);
    // a request an API node died serving was retried on the other node: its reservation is no call's metering.
    // Or its answer had left when the node died, before its served mark: answered, never charged (the merchant
    // loses that request, the bound docs/money.md states), so the answers may pass the metered by those
    const m = usage.filter((u) => u.policy === p && !orphan(u)).reduce((a, u) => a + BigInt(u.chunk), 0n);
    const diedServing = usage.filter((u) => u.policy === p && orphan(u)).reduce((a, u) => a + BigInt(u.chunk), 0n);
    if (!calls) continue;
    answered += calls.ok;
    sent += calls.sent;
    refusedCalls += calls.refused;
    failedCalls += calls.errors;
    unavailableCalls += calls.unavailable;
    if (BigInt(calls.ok) * o.price > m + diedServing || m > BigInt(calls.sent) * o.price) {
      problems.push(`${p}: metered ${m} (${diedServing} more in reservations of a node that died), ${calls.ok} answered and ${calls.sent} calls made at ${o.price}`);
    }
  }
  // a call the service could not answer is a 503 with Retry-After; any other 5xx or no answer is a lost request
  const during = (at: number) => o.faults.find((w) => at >= w.from - 1000 && at <= w.to + 3000)?.name ?? 'no fault';
  if (failedCalls > 0) problems.push(`${failedCalls} bearer calls lost (5xx or no answer): ${o.lost.slice(0, 4).map((l) => `${l.what} (${during(l.at)})`).join('; ')}`);
  return {
    name: 'metered chunks charged exactly once', ok: problems.length === 0 && executed.length > 0 && metered > 0n,
    detail: `${policies.size} pay-as-you-go policies, ${usage.length} chunks metered (${metered}), ${answered} of ${sent} bearer calls answered 200 (402: ${refusedCalls}, 503 with Retry-After: ${unavailableCalls}, other 5xx or no answer: ${failedCalls}); ${executed.length} charges executed, ${charges.length - executed.length} refused; charged ${charged} = on chain ${onChain}; unsettled ${unsettled}; reservations of requests an API node died serving (dropped at their bound, never charged) ${orphaned}; unbillable ${unbillable.size ? JSON.stringify(Object.fromEntries(unbillable)) : 'none'}${problems.length ? `; PROBLEMS (${problems.length}): ${problems.slice(0, 6).join('; ')}` : ''}`,
  };
}
