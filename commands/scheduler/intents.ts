/**
 * Execution intents in Postgres: what is due (from the policies read model, or the chain's
 * own accounts, sweep.ts) becomes one row per (policy, due time, payment count) before
 * anything is sent; scheduler processes claim rows with
 * FOR UPDATE SKIP LOCKED under a lease, so several share the work and a dead one's rows
 * are taken over once its lease ends. Every write after a claim is conditional on still
 * holding it, so a process whose lease ran out cannot overwrite the one that took over.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { Decision } from './decide.js';
import type { ExecutionIntentsTable, IntentStatus } from './tables.js';
import type { Selectable } from 'kysely';
import { NOT_GATEWAY } from './release.js';

export type Intent = Selectable<ExecutionIntentsTable>;

/** Variants the scheduler executes on their own schedule (pay-as-you-go is the settler's). */
export const SCHEDULED_VARIANTS = ['Subscription', 'Milestone', 'OneTime'] as const;

/**
 * Intents for every due payment of the active gateways; returns how many were new. A
 * payment is (due date, payment_count): two milestones of one timestamp are two. A row
 * from before the count was kept (-1) stands for any count of its due date.
 */
export async function enqueueDue(db: Db, nowSeconds: number, limit = 5000): Promise<number> {
  const r = await sql<{ n: string }>`
    WITH due AS (
      SELECT p.address, p.gateway, p.variant, p.tracking_id, p.next_payment_due::bigint AS due_at, p.payment_count
      FROM payment_policies p JOIN scheduler_gateways g ON g.gateway = p.gateway AND g.state = 'active'
      WHERE p.status = 'Active' AND NOT p.deleted AND p.variant IN ('Subscription', 'Milestone', 'OneTime')
        AND p.next_payment_due IS NOT NULL AND p.next_payment_due::bigint <= ${nowSeconds}
        -- a milestone its owner or recipient releases is never the gateway signer's (release.ts)
        AND NOT (p.variant = 'Milestone' AND (coalesce((p.policy_type->>'release_condition')::int, 0) & ${NOT_GATEWAY}) <> 0)
        -- those with an intent already: with more due than the limit, the rest still get theirs
        AND NOT EXISTS (SELECT 1 FROM execution_intents i WHERE i.policy = p.address AND i.due_at = p.next_payment_due::bigint
                          AND i.payment_index IN (p.payment_count, -1))
      ORDER BY p.next_payment_due::bigint LIMIT ${limit}
    ), ins AS (
      INSERT INTO execution_intents (policy, gateway, variant, tracking_id, due_at, payment_index)
      SELECT address, gateway, variant, tracking_id, due_at, payment_count FROM due
      ON CONFLICT (policy, due_at, payment_index) DO NOTHING RETURNING 1
    ) SELECT count(*)::text AS n FROM ins`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * One intent for (policy, due, payment_count) as the chain states it, when the read model
 * is behind (first tried at `notBeforeMs`, default now); none when a row of that due date
 * from before counts were kept stands for it. A parked one (paused) is not touched here.
 */
export async function ensureIntent(
  db: Db, i: Pick<Intent, 'policy' | 'gateway' | 'variant' | 'tracking_id'>, dueAt: number, notBeforeMs?: number, paymentIndex = -1,
): Promise<void> {
  const at = notBeforeMs === undefined ? sql`now()` : sql`${new Date(notBeforeMs)}::timestamptz`;
  await sql`
    INSERT INTO execution_intents (policy, gateway, variant, tracking_id, due_at, payment_index, next_attempt_at)
    SELECT ${i.policy}, ${i.gateway}, ${i.variant}, ${i.tracking_id}, ${dueAt}, ${paymentIndex}, ${at}
    WHERE NOT EXISTS (SELECT 1 FROM execution_intents WHERE policy = ${i.policy} AND due_at = ${dueAt} AND payment_index = -1)
    ON CONFLICT (policy, due_at, payment_index) DO NOTHING`.execute(db);
}

/**
 * The policy is Active again (resumed): its parked intents are due again at once, in the
 * dunning step they were parked in. The chain judges each before anything is sent.
 */
export async function unpark(db: Db, policies: readonly string[]): Promise<number> {
  if (policies.length === 0) return 0;
  const r = await db.updateTable('execution_intents')
    .set({ status: sql<IntentStatus>`CASE WHEN dunning_step > 0 THEN 'past_due' ELSE 'pending' END`, next_attempt_at: new Date(), updated_at: new Date() })
    .where('status', '=', 'paused').where('policy', 'in', [...policies]).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** The key of a payment.upcoming announcement: once per (policy, due time). */
export const upcomingKey = (policy: string, dueAt: number | string): string => `payment.upcoming:${policy}:${dueAt}`;

/**
 * Policies of the active gateways falling due within the lead time and not announced yet
 * for that due time, for payment.upcoming (one query a round; the next round takes the
 * rest when more than `limit` fall due).
 */
export async function upcoming(db: Db, nowSeconds: number, leadSeconds: number, limit = 1000) {
  return db.selectFrom('payment_policies as p').innerJoin('scheduler_gateways as g', 'g.gateway', 'p.gateway')
    .select(['p.address', 'p.gateway', 'p.tracking_id', 'p.next_payment_due', 'p.variant'])
    .where('g.state', '=', 'active').where('p.status', '=', 'Active').where('p.deleted', '=', false)
    .where('p.variant', 'in', [...SCHEDULED_VARIANTS])
    .where(sql<boolean>`NOT (p.variant = 'Milestone' AND (coalesce((p.policy_type->>'release_condition')::int, 0) & ${NOT_GATEWAY}) <> 0)`)
    .where(sql<boolean>`p.next_payment_due::bigint > ${nowSeconds} AND p.next_payment_due::bigint <= ${nowSeconds + leadSeconds}`)
    .where(sql<boolean>`NOT EXISTS (SELECT 1 FROM service_events e WHERE e.event_key = 'payment.upcoming:' || p.address || ':' || p.next_payment_due::bigint)`)
    .orderBy(sql`p.next_payment_due::bigint`).limit(limit).execute();
}

/** Claims due intents of active gateways for `leaseMs`. */
export async function claimIntents(db: Db, me: string, limit: number, leaseMs: number): Promise<Intent[]> {
  const r = await sql<Intent>`
    UPDATE execution_intents SET locked_by = ${me}, locked_until = now() + make_interval(secs => ${leaseMs / 1000}), updated_at = now()
    WHERE id IN (
      -- a gateway whose signer row does not open waits (signers.ts); the others go on
      SELECT i.id FROM execution_intents i JOIN scheduler_gateways g ON g.gateway = i.gateway AND g.state = 'active' AND g.signer_error IS NULL
      WHERE i.status IN ('pending', 'sending', 'past_due') AND i.next_attempt_at <= now()
        AND (i.locked_until IS NULL OR i.locked_until < now())
      ORDER BY i.next_attempt_at, i.id LIMIT ${limit}
      FOR UPDATE OF i SKIP LOCKED
    ) RETURNING *`.execute(db);
  return r.rows;
}

/** Stores the signed transaction before it is sent; false when the claim was lost meanwhile. */
export async function markSending(
  db: Db, id: string, me: string, s: { signature: string; blockhash: string; wire: string; paymentCountBefore: number },
): Promise<boolean> {
  const r = await db.updateTable('execution_intents')
    .set({ status: 'sending', signature: s.signature, blockhash: s.blockhash, wire: s.wire, payment_count_before: s.paymentCountBefore, updated_at: new Date() })
    .where('id', '=', id).where('locked_by', '=', me).where('locked_until', '>', new Date())
    .where('status', 'in', ['pending', 'past_due'] satisfies IntentStatus[])
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export interface AttemptRecord { outcome: string; reasonCode?: string; reason?: string; signature?: string | null; lagMs?: number | null }

/** Writes the decision and its attempt in one transaction, if the claim is still ours. */
export async function settleIntent(db: Db, i: Intent, me: string, d: Decision, a: AttemptRecord, keepSending = false): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const r = await trx.updateTable('execution_intents').set({
      status: d.status, dunning_step: d.dunningStep, consecutive_failures: d.consecutiveFailures,
      attempts: sql<number>`attempts + 1`, last_reason: a.reason ?? null, updated_at: new Date(),
      next_attempt_at: d.nextAttemptAtMs === undefined ? new Date() : new Date(d.nextAttemptAtMs),
      locked_by: null, locked_until: null,
      ...(d.status === 'executed' ? { executed_at: new Date() } : {}),
      ...(keepSending ? {} : { wire: null, blockhash: null }),
    }).where('id', '=', i.id).where('locked_by', '=', me).executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) return false;
    await trx.insertInto('execution_attempts').values({
      intent_id: i.id, policy: i.policy, gateway: i.gateway, outcome: a.outcome, reason_code: a.reasonCode ?? '',
      reason: a.reason ?? '', signature: a.signature ?? null, lag_ms: a.lagMs ?? null,
    }).execute();
    return true;
  });
}

/** Lets go of a claim without an attempt (the outcome is not known yet: look again soon). */
export async function releaseIntent(db: Db, id: string, me: string, retryAtMs: number): Promise<void> {
  await db.updateTable('execution_intents').set({ locked_by: null, locked_until: null, next_attempt_at: new Date(retryAtMs) })
    .where('id', '=', id).where('locked_by', '=', me).execute();
}

/** Back to pending with the stale transaction forgotten (its blockhash expired without it landing). */
export async function forgetTransaction(db: Db, id: string, me: string): Promise<boolean> {
  const r = await db.updateTable('execution_intents')
    .set({ status: sql<IntentStatus>`CASE WHEN dunning_step > 0 THEN 'past_due' ELSE 'pending' END`, wire: null, blockhash: null, signature: null })
    .where('id', '=', id).where('locked_by', '=', me).where('status', '=', 'sending').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
