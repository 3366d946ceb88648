/**
 * The money invariants, checked after a run from the chain's own events (money-model-chain.ts)
 * and the service's ledgers; each failure names the policy, what was expected and what was
 * found. Times: the chain's are block times (the program's clock, which may lag the wall
 * clock by a few seconds under faults), the samples' are wall-clock; SLACK_S absorbs both.
 */
import { sql } from 'kysely';
import { servedSql } from '../../commands/settlement/served-marks.js';
import type { ChainPolicy } from './money-model-chain.js';
import type { Interval, World } from './money-model-world.js';

export interface Violation { invariant: string; policy: string; expected: string; found: string }

/** seconds: the chain clock's lag, a block's delay and a scheduler round under faults */
export const SLACK_S = 6;

type Usage = { request_id: string; policy: string; chunk: string; charge_id: string | null; unbillable_reason: string | null; served: boolean };
type Charge = { id: string; policy: string; amount: string; status: string; signature: string };

export async function paygViolations(w: World, chain: Map<string, ChainPolicy>): Promise<Violation[]> {
  const db = w.s.h.env.db;
  const usage = await db.selectFrom('payg_usage').select(['request_id', 'policy', 'chunk', 'charge_id', 'unbillable_reason', servedSql('payg_usage').as('served')]).execute() as Usage[];
  const charges = await db.selectFrom('payg_charges').select(['id', 'policy', 'amount', 'status', 'signature']).execute() as Charge[];
  const out: Violation[] = [];
  const chargeById = new Map(charges.map((c) => [String(c.id), c]));
  for (const p of [...chain.values()].filter((x) => x.kind === 'PayAsYouGo')) {
    const why = await context(w, p);
    const rows = usage.filter((u) => u.policy === p.address);
    const metered = rows.reduce((a, u) => a + BigInt(u.chunk), 0n);
    const charged = p.records.reduce((a, r) => a + r.amount, 0n);
    if (charged > metered) out.push({ invariant: 'charged ≤ metered', policy: p.address, expected: `≤ ${metered}`, found: String(charged) });
    const executed = charges.filter((c) => c.policy === p.address && c.status === 'executed');
    const bySig = new Map(executed.map((c) => [c.signature, c]));
    for (const r of p.records) {
      const c = bySig.get(r.signature);
      if (!c) out.push({ invariant: 'a charge on chain is one executed ledger charge', policy: p.address, expected: `a payg_charges row for ${r.signature}`, found: 'none' });
      else if (BigInt(c.amount) !== r.amount) out.push({ invariant: 'a charge takes what the ledger says', policy: p.address, expected: c.amount, found: String(r.amount) });
    }
    for (const c of executed) {
      if (!p.records.some((r) => r.signature === c.signature)) out.push({ invariant: 'an executed ledger charge is on chain', policy: p.address, expected: c.signature, found: 'no PaymentRecord' });
      const sum = rows.filter((u) => String(u.charge_id) === String(c.id)).reduce((a, u) => a + BigInt(u.chunk), 0n);
      if (sum !== BigInt(c.amount)) out.push({ invariant: 'a charge is the sum of its chunks', policy: p.address, expected: c.amount, found: String(sum) });
    }
    for (const u of rows) {
      if (!u.served) continue;
      const c = u.charge_id === null ? undefined : chargeById.get(String(u.charge_id));
      const billed = c?.status === 'executed';
      if (billed && u.unbillable_reason !== null) out.push({ invariant: 'a chunk is charged or unbillable, not both', policy: p.address, expected: 'one', found: `${u.request_id}: both` });
      if (!billed && !u.unbillable_reason) {
        out.push({ invariant: 'every metered chunk charged once or unbillable with the chain\'s reason', policy: p.address, expected: 'charged or a reason', found: `${u.request_id} (${u.chunk}) ${c ? `charge ${c.id} ${c.status}` : 'in no charge'}; ${why}` });
      }
    }
    const served = w.samples.filter((s) => s.policy === p.address && s.status === 200).length;
    const recorded = rows.filter((u) => u.served).length;
    if (served > recorded) out.push({ invariant: 'every request served is metered', policy: p.address, expected: `≥ ${served} served rows`, found: String(recorded) });
  }
  for (const e of w.exposure) {
    if (e.owed > e.bound) out.push({ invariant: 'unsettled exposure ≤ maxUnsettledAmount', policy: `payer account ${e.userPayment}`, expected: `≤ ${e.bound}`, found: `${e.owed} at ${new Date(e.at).toISOString()}` });
  }
  // the ledger's own tally of each account (what it refuses a row past) equals what its rows say
  const tallies = await sql<{ user_payment: string; tally: string; rows: string }>`
    SELECT coalesce(t.user_payment, r.user_payment) AS user_payment, coalesce(t.owed, 0)::text AS tally, coalesce(r.owed, 0)::text AS rows
    FROM payg_account_owed t FULL JOIN (
      SELECT u.user_payment, sum(u.chunk) AS owed FROM payg_usage u LEFT JOIN payg_charges c ON c.id = u.charge_id
      WHERE u.user_payment IS NOT NULL AND u.unbillable_reason IS NULL AND (c.id IS NULL OR c.status <> 'executed') GROUP BY u.user_payment) r
    ON r.user_payment = t.user_payment
    WHERE coalesce(t.owed, 0) <> coalesce(r.owed, 0)`.execute(w.s.h.env.db);
  for (const t of tallies.rows) out.push({ invariant: 'the ledger\'s tally of an account\'s outstanding equals its rows', policy: `payer account ${t.user_payment}`, expected: t.rows, found: t.tally });
  return out;
}

/** What stood in a policy's way: its halts, its payer's open intervals, the settler's last attempts. */
async function context(w: World, p: ChainPolicy): Promise<string> {
  const attempts = await w.s.h.env.db.selectFrom('execution_attempts').select(['outcome', 'reason_code']).where('policy', '=', p.address)
    .orderBy('id', 'desc').limit(3).execute();
  const open = w.intervals.filter((i) => i.key === p.userPayment && i.to === undefined).map((i) => i.what);
  return `halts ${JSON.stringify(p.halted)}, payer ${open.join('+') || 'free'}, last attempts ${attempts.map((a) => `${a.outcome}/${a.reason_code ?? ''}`).join(' ') || 'none'}`;
}

/** The policy's execution intents as the scheduler left them (a missed period's evidence). */
async function intentsOf(w: World, p: ChainPolicy): Promise<string> {
  const rows = await w.s.h.env.db.selectFrom('execution_intents').select(['id', 'due_at', 'status', 'attempts', 'last_reason', 'created_at', 'executed_at'])
    .where('policy', '=', p.address).orderBy('id').execute();
  const records = p.records.map((r) => r.at).join(',');
  const spans = w.intervals.filter((i) => i.key === p.userPayment || i.key === 'service')
    .map((i) => `${i.what} ${Math.floor(i.from / 1000)}-${i.to === undefined ? '' : Math.floor(i.to / 1000)}`).join(', ');
  return `intervals [${spans}], chain records at [${records}], intents ${rows.map((r) => `#${r.id} due ${r.due_at} ${r.status} x${r.attempts}${r.last_reason ? ` (${r.last_reason})` : ''} made ${Math.floor(r.created_at.getTime() / 1000)}${r.executed_at ? ` done ${Math.floor(r.executed_at.getTime() / 1000)}` : ''}`).join('; ') || 'none'}`;
}

/**
 * Whether [from, to] (unix seconds) meets an interval in which the policy could not be charged. `dunning`:
 * the spans in which the policy's due payment waited on the dunning schedule after the program refused it
 * for the payer's reason (an attempt recorded past_due: no delegate, no funds), from that attempt to the
 * next one (or, with none, a longest step later). The model cannot always know these itself: a payer's
 * revoke and reapprove the hostile localnet delayed may land in the other order than they were sent.
 */
function impeded(w: World, p: ChainPolicy, from: number, to: number, givenUp?: number, dunning: readonly [number, number][] = []): string | undefined {
  if (givenUp !== undefined && givenUp - SLACK_S <= to) return 'given up by the dunning schedule';
  if (dunning.some(([a, b]) => a - SLACK_S <= to && b + SLACK_S >= from)) return 'refused for the payer, waiting on the dunning schedule';
  const meets = (a: number, b: number | undefined): boolean => a <= to && (b ?? Infinity) >= from;
  const h = p.halted.find((x) => meets(x.from - SLACK_S, x.to === undefined ? undefined : x.to + SLACK_S));
  if (h) return h.what;
  const s = (i: Interval): boolean => (i.key === p.userPayment || i.key === 'service') && i.what !== 'settler-down'
    && meets(i.from / 1000 - SLACK_S, i.to === undefined ? undefined : i.to / 1000 + SLACK_S);
  const i = w.intervals.find(s);
  if (i) return i.what;
  const model = w.policies.find((m) => m.address === p.address);
  return model?.deletedAt !== undefined && model.deletedAt / 1000 - SLACK_S <= to ? 'deleted' : undefined;
}

/** Each due period of a subscription executed exactly once, none early, unless it could not be charged. */
export async function subscriptionViolations(w: World, chain: Map<string, ChainPolicy>, endSec: number): Promise<Violation[]> {
  const out: Violation[] = [];
  const gaveUp = new Map<string, number>();
  const dunning = new Map<string, [number, number][]>();
  const longestStep = Math.max(0, ...w.s.config.scheduler.dunningScheduleMs) / 1000;
  const byPolicy = new Map<string, { at: number; outcome: string }[]>();
  for (const a of await w.s.h.env.db.selectFrom('execution_attempts').select(['policy', 'at', 'outcome']).orderBy('at').orderBy('id').execute()) {
    const list = byPolicy.get(a.policy) ?? [];
    list.push({ at: a.at.getTime() / 1000, outcome: a.outcome });
    byPolicy.set(a.policy, list);
  }
  for (const [policy, list] of byPolicy) {
    const given = list.find((a) => a.outcome === 'given_up');
    if (given) gaveUp.set(policy, given.at);
    // each past_due attempt waits until the next attempt of its policy, or a longest step with none
    dunning.set(policy, list.flatMap((a, i) => (a.outcome === 'past_due' ? [[a.at, list[i + 1]?.at ?? a.at + longestStep] as [number, number]] : [])));
  }
  for (const p of [...chain.values()].filter((x) => x.kind === 'Subscription' && x.due !== undefined && x.step !== undefined)) {
    const base = p.due!, step = p.step!;
    const paid = new Map<number, number>();
    for (const r of p.records) {
      if (r.at < base - SLACK_S) out.push({ invariant: 'no subscription payment early', policy: p.address, expected: `≥ ${base}`, found: `record ${r.recordId} at ${r.at}` });
      const g = base + Math.max(0, Math.floor((r.at - base) / step)) * step;
      paid.set(g, (paid.get(g) ?? 0) + 1);
    }
    for (const [g, n] of paid) if (n > 1) out.push({ invariant: 'each due period executed once', policy: p.address, expected: `1 payment for the period due ${g}`, found: String(n) });
    // a period is lost once the next one is due: each one whose window closed before the end is checked
    for (let g = base; g + step <= endSec - SLACK_S; g += step) {
      if (paid.has(g)) continue;
      if (!impeded(w, p, g, g + step, gaveUp.get(p.address), dunning.get(p.address))) {
        out.push({ invariant: 'every due period of a funded, approved, Active subscription executed', policy: p.address, expected: `a payment in [${g}, ${g + step})`, found: `none; ${await context(w, p)}; ${await intentsOf(w, p)}` });
      }
    }
  }
  return out;
}

/** Bearer answers: a payer paid through a period (and its grace) is served; one unpaid past the grace is refused. */
export function accessViolations(w: World, chain: Map<string, ChainPolicy>): Violation[] {
  const out: Violation[] = [];
  const grace = w.sub.gracePeriodSeconds ?? 0;
  for (const s of w.samples.filter((x) => x.kind === 'sub' && x.status !== 0)) {
    const p = chain.get(s.policy);
    if (!p || p.due === undefined || p.step === undefined) continue;
    // paid through: the due date after the last payment the chain had made by then
    const through = (t: number): number => {
      const last = p.records.filter((r) => r.at <= t).at(-1);
      return last ? p.due! + (Math.floor((last.at - p.due!) / p.step!) + 1) * p.step! : p.due!;
    };
    const t0 = s.t0 / 1000, t1 = s.t1 / 1000;
    const halted = p.halted.some((h) => h.what === 'deleted' && h.from <= t1 + SLACK_S);
    if (s.status !== 200 && !halted && t1 + SLACK_S < through(t0 - SLACK_S) + grace) {
      out.push({ invariant: 'a payer who paid is served through the period and its grace', policy: s.policy, expected: `200 until ${through(t0 - SLACK_S) + grace}`, found: `${s.status} at ${t0.toFixed(1)}${s.why ? `: ${s.why}` : ''}` });
    }
    if (s.status === 200 && t0 - SLACK_S > through(t1 + SLACK_S) + grace) {
      out.push({ invariant: 'a payer who did not pay is refused after the grace', policy: s.policy, expected: `402 after ${through(t1 + SLACK_S) + grace}`, found: `200 at ${t0.toFixed(1)}` });
    }
  }
  return out;
}
