/**
 * Charges of metered usage in Postgres. A charge row (with its signed transaction) and
 * the usage rows it covers are written in one transaction before the send; at most one
 * charge per policy is in flight (a unique index), so settler processes never charge the
 * same usage twice. A charge ends executed (the usage is charged, matched to the
 * PaymentRecord record_id = payment_count before + 1) or failed (the usage goes back to
 * unsettled, or is marked unbillable with the chain's reason); each end is kept as an
 * attempt (execution_attempts with the charge's id), as the scheduler keeps its own.
 *
 * Usage that leaves the accounts' outstanding (commands/x402/account-outstanding.ts), a
 * charge executed or usage marked unbillable, is released from it in Redis inside the
 * transaction that records so, before its commit: a rebuild of the outstanding from these
 * rows that races it can then only count the usage once more (refusing too much for a
 * while), not take it out twice.
 */
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { PaygChargesTable } from '../scheduler/tables.js';
import type { Released, ReleaseOutstanding } from '../x402/account-outstanding.js';
import { servedSql } from './served-marks.js';

export type Charge = Selectable<PaygChargesTable>;

export interface UnsettledPolicy { policy: string; gateway: string; total: bigint; oldestMs: number }

/**
 * A chunk younger than this may still be in admission: the meter writes it to the ledger
 * before the Redis script admits or refuses it, and takes a refused one back. Charging it
 * meanwhile billed the payer for a request answered 402 (the take-back cannot undo a
 * charge), so the settler leaves chunks alone until their admission is long over.
 */
export const ADMISSION_SECONDS = 5;
const admitted = sql<boolean>`u.metered_at < now() - make_interval(secs => ${ADMISSION_SECONDS}) AND ${servedSql('u')}`;

/**
 * Drops the reservations whose request was never answered within their bound: the process
 * serving it died between writing the chunk and answering (usage-ledger.ts). They are never
 * charged. Their counts in Redis are left as they are: whether the dead process counted them
 * is not known, and counting too much only refuses (the account's outstanding is rebuilt
 * from the ledger within minutes, a period's counter ends with its period).
 */
export async function dropExpiredReservations(db: Db): Promise<number> {
  // among the uncharged rows (payg_usage_unsettled_idx); a row its process's mark covers was served, whatever its bound
  const r = await db.deleteFrom('payg_usage')
    .where('charge_id', 'is', null).where('unbillable_reason', 'is', null).where('reserved_until', '<', sql<Date>`now()`)
    .where(sql<boolean>`NOT ${servedSql('payg_usage')}`).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function unsettledPolicies(db: Db, limit = 500): Promise<UnsettledPolicy[]> {
  const rows = await db.selectFrom('payg_usage as u').innerJoin('scheduler_gateways as g', 'g.gateway', 'u.gateway')
    .select(['u.policy', 'u.gateway', sql<string>`sum(u.chunk)::text`.as('total'), sql<Date>`min(u.metered_at)`.as('oldest')])
    .where('g.state', '=', 'active').where('u.charge_id', 'is', null).where('u.unbillable_reason', 'is', null).where(admitted)
    .where('u.chunk', '>', '0') // a free request's row (written before metering skipped them) is nothing to charge
    .groupBy(['u.policy', 'u.gateway']).limit(limit).execute();
  return rows.map((r) => ({ policy: r.policy, gateway: r.gateway, total: BigInt(r.total), oldestMs: new Date(r.oldest).getTime() }));
}

export interface UsageRow { request_id: string; chunk: string; period_start: string }

export async function unsettledRows(db: Db, policy: string, limit = 10_000): Promise<UsageRow[]> {
  return db.selectFrom('payg_usage as u').select(['u.request_id', 'u.chunk', 'u.period_start'])
    .where('u.policy', '=', policy).where('u.charge_id', 'is', null).where('u.unbillable_reason', 'is', null).where(admitted).where('u.chunk', '>', '0')
    .orderBy('u.metered_at').orderBy('u.request_id').limit(limit).execute();
}

/**
 * What a charge is signed against: the policy's payment_count (its PaymentRecord will be number
 * count + 1) and created_at (which policy of a reused address: migration 1017), as read from the chain.
 */
export interface ChargeBasis { paymentCountBefore: number; policyCreatedAt: string | null }

/** The basis of a charge signed from this read of its policy. */
export function chargeBasis(ctx: { policy: { data: Record<string, unknown> } }): ChargeBasis {
  const created = ctx.policy.data['created_at'];
  const stamp = typeof created === 'string' || typeof created === 'number' || typeof created === 'bigint' ? String(created) : null;
  return { paymentCountBefore: Number(ctx.policy.data['payment_count']), policyCreatedAt: stamp };
}

/**
 * An executed charge of the same policy numbered beyond this basis counts this long: a read is
 * behind by seconds (a node lagging, another settler's charge recorded meanwhile), never by an
 * hour; and a policy at a reused address created in the same second as the one before it (one
 * transaction deleting and creating) is held up no longer than this, never for good.
 */
const STALE_READ_WINDOW = sql`interval '1 hour'`;

/**
 * The charge and its usage rows; `in_flight` when another charge of the policy is in flight or a row
 * was taken; `stale` when the policy's read is older than a charge already recorded for it.
 *
 * The read the charge was signed from must not be older than any charge of the policy recorded as
 * executed: its fate, when its status is no longer kept, is read from the payment_count moving past
 * paymentCountBefore, which an older charge moves too. Read before another settler's charge landed
 * (or from an RPC node behind the one that confirmed it), a charge that never landed was taken for
 * landed and its usage recorded as charged, never paid. Checked once this charge holds the policy's
 * one in-flight slot: a charge recorded executed before it took the slot is visible here, and none
 * can be recorded while it holds it.
 */
export async function openCharge(
  db: Db, c: { policy: string; gateway: string; amount: bigint; signature: string; blockhash: string; wire: string } & ChargeBasis,
  requestIds: readonly string[],
): Promise<Charge | 'in_flight' | 'stale'> {
  try {
    return await db.transaction().execute(async (trx) => {
      const charge = await trx.insertInto('payg_charges').values({
        policy: c.policy, gateway: c.gateway, amount: c.amount.toString(), payment_count_before: c.paymentCountBefore,
        policy_created_at: c.policyCreatedAt, signature: c.signature, blockhash: c.blockhash, wire: c.wire,
      }).returningAll().executeTakeFirstOrThrow();
      const ahead = await trx.selectFrom('payg_charges').select('id')
        .where('policy', '=', c.policy).where('status', '=', 'executed').where('finished_at', '>', sql<Date>`now() - ${STALE_READ_WINDOW}`)
        .where('record_id', '>', c.paymentCountBefore).where(sql<boolean>`policy_created_at IS NOT DISTINCT FROM ${c.policyCreatedAt}`)
        .limit(1).executeTakeFirst();
      if (ahead) throw new StaleRead();
      // served rows only come here: what their marks said is folded into the row (reserved_until NULL)
      const r = await trx.updateTable('payg_usage').set({ charge_id: charge.id, reserved_until: null })
        .where('request_id', 'in', [...requestIds]).where('charge_id', 'is', null).where('unbillable_reason', 'is', null)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== requestIds.length) throw new RowsTaken();
      return charge;
    });
  } catch (err) {
    if (err instanceof StaleRead) return 'stale';
    if (err instanceof RowsTaken || (err as { code?: string }).code === '23505') return 'in_flight';
    throw err;
  }
}

class StaleRead extends Error {}
class RowsTaken extends Error {}

export interface ChargeAttempt { outcome: string; code?: string; reason?: string }

async function keepAttempt(trx: Db, c: Pick<Charge, 'id' | 'policy' | 'gateway' | 'signature'>, a: ChargeAttempt): Promise<void> {
  await trx.insertInto('execution_attempts').values({
    charge_id: c.id, policy: c.policy, gateway: c.gateway, outcome: a.outcome, reason_code: a.code ?? '', reason: a.reason ?? '', signature: c.signature,
  }).execute();
}

/** What each account had drawn in these usage rows (rows metered before accounts were kept have none). */
function byAccount(rows: readonly { user_payment: string | null; chunk: string }[]): Released[] {
  const sums = new Map<string, bigint>();
  for (const r of rows) if (r.user_payment) sums.set(r.user_payment, (sums.get(r.user_payment) ?? 0n) + BigInt(r.chunk));
  return [...sums].map(([userPayment, amount]) => ({ userPayment, amount }));
}

async function chargeRows(trx: Db, c: Pick<Charge, 'id' | 'policy'>): Promise<{ user_payment: string | null; chunk: string }[]> {
  return trx.selectFrom('payg_usage').select(['user_payment', 'chunk']).where('policy', '=', c.policy).where('charge_id', '=', c.id).execute();
}

/** Marks the charge executed, with its attempt, its usage released from the account's outstanding; undefined when another settler finished it first. */
export async function chargeExecuted(db: Db, id: string, release?: ReleaseOutstanding): Promise<Charge | undefined> {
  return db.transaction().execute(async (trx) => {
    const done = await trx.updateTable('payg_charges')
      .set({ status: 'executed', record_id: sql<number>`payment_count_before + 1`, finished_at: new Date() })
      .where('id', '=', id).where('status', '=', 'sending').returningAll().executeTakeFirst();
    if (done) {
      await keepAttempt(trx, done, { outcome: 'executed' });
      if (release) await release(byAccount(await chargeRows(trx, done)), `charge:${done.id}`);
    }
    return done;
  });
}

/**
 * Marks the charge failed, with its attempt; its usage goes back to unsettled, or becomes
 * unbillable with the reason (and leaves the account's outstanding).
 */
export async function chargeFailed(db: Db, c: Charge, reason: string, unbillable: boolean, attempt: ChargeAttempt, release?: ReleaseOutstanding): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const r = await trx.updateTable('payg_charges').set({ status: 'failed', reason, finished_at: new Date() })
      .where('id', '=', c.id).where('status', '=', 'sending').executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    const rows = await trx.updateTable('payg_usage')
      .set(unbillable ? { unbillable_reason: reason } : { charge_id: null })
      .where('charge_id', '=', c.id).returning(['user_payment', 'chunk']).execute();
    await keepAttempt(trx, c, attempt);
    if (unbillable && release) await release(byAccount(rows), `charge:${c.id}`);
    return true;
  });
}

export interface RetryState { refusals: number; lastAtMs: number }

/**
 * For each policy, its charges refused on the retry schedule (outcome past_due) since its
 * last executed or given-up charge, and when the last one was: the schedule survives a
 * restart of the settler.
 */
export async function retryStates(db: Db, policies: readonly string[]): Promise<Map<string, RetryState>> {
  if (policies.length === 0) return new Map();
  const r = await sql<{ policy: string; refusals: number; last_at: Date }>`
    SELECT a.policy, count(*)::int AS refusals, max(a.at) AS last_at FROM execution_attempts a
    WHERE a.charge_id IS NOT NULL AND a.policy = ANY(${[...policies]}::text[]) AND a.outcome = 'past_due'
      AND a.id > coalesce((SELECT max(e.id) FROM execution_attempts e
                           WHERE e.policy = a.policy AND e.charge_id IS NOT NULL AND e.outcome IN ('executed', 'given_up')), 0)
    GROUP BY a.policy`.execute(db);
  return new Map(r.rows.map((x) => [x.policy, { refusals: x.refusals, lastAtMs: new Date(x.last_at).getTime() }]));
}

/** Every unsettled chunk of the policy unbillable with the reason (out of the account's outstanding), and the attempt that found it so. */
export async function markUnbillable(
  db: Db, p: { policy: string; gateway: string }, reason: string, attempt: ChargeAttempt, release?: ReleaseOutstanding,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx.updateTable('payg_usage').set({ unbillable_reason: reason, reserved_until: null })
      .where('policy', '=', p.policy).where('charge_id', 'is', null).where('unbillable_reason', 'is', null).where(servedSql('payg_usage'))
      .returning(['user_payment', 'chunk']).execute();
    if (rows.length > 0) {
      await trx.insertInto('execution_attempts').values({
        policy: p.policy, gateway: p.gateway, outcome: attempt.outcome, reason_code: attempt.code ?? '', reason: attempt.reason ?? reason,
      }).execute();
      if (release) await release(byAccount(rows));
    }
    return rows.length;
  });
}

export async function chargesInDoubt(db: Db, olderThanMs: number): Promise<Charge[]> {
  return db.selectFrom('payg_charges').selectAll().where('status', '=', 'sending')
    .where('created_at', '<', new Date(Date.now() - olderThanMs)).limit(100).execute();
}
