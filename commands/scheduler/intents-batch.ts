/**
 * The intents.ts writes of a whole batch in one statement each, under the same
 * conditions: a signed transaction is stored only on an intent still claimed by this
 * process (and before it is sent), and an execution is recorded, with its attempt row,
 * only while the claim holds.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { Intent } from './intents.js';

export interface SigningRecord { id: string; signature: string; blockhash: string; wire: string; paymentCountBefore: number }

/** markSending for every row; the ids whose transaction was stored (the claim still held). */
export async function markSendingMany(db: Db, me: string, rows: readonly SigningRecord[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const r = await sql<{ id: string }>`
    UPDATE execution_intents i SET status = 'sending', signature = v.signature, blockhash = v.blockhash, wire = v.wire,
      payment_count_before = v.pcb, updated_at = now()
    FROM unnest(${rows.map((x) => x.id)}::bigint[], ${rows.map((x) => x.signature)}::text[], ${rows.map((x) => x.blockhash)}::text[],
                ${rows.map((x) => x.wire)}::text[], ${rows.map((x) => x.paymentCountBefore)}::int[]) AS v(id, signature, blockhash, wire, pcb)
    WHERE i.id = v.id AND i.locked_by = ${me} AND i.locked_until > now() AND i.status IN ('pending', 'past_due')
    RETURNING i.id::text AS id`.execute(db);
  return new Set(r.rows.map((x) => x.id));
}

export interface Executed { intent: Intent; lagMs: number }

/**
 * succeed() without the events for every row, in one transaction: executed, counters
 * reset, the claim and the signed bytes kept as settleIntent keeps them; the ids recorded.
 */
export async function recordExecutedMany(db: Db, me: string, rows: readonly Executed[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  return db.transaction().execute(async (trx) => {
    const r = await sql<{ id: string }>`
      UPDATE execution_intents SET status = 'executed', consecutive_failures = 0, attempts = attempts + 1, last_reason = '',
        updated_at = now(), next_attempt_at = now(), locked_by = NULL, locked_until = NULL, executed_at = now()
      WHERE id = ANY(${rows.map((x) => x.intent.id)}::bigint[]) AND locked_by = ${me}
      RETURNING id::text AS id`.execute(trx);
    const done = new Set(r.rows.map((x) => x.id));
    const kept = rows.filter((x) => done.has(x.intent.id));
    if (kept.length > 0) {
      await sql`
        INSERT INTO execution_attempts (intent_id, policy, gateway, outcome, reason_code, reason, signature, lag_ms)
        SELECT v.id, v.policy, v.gateway, 'executed', '', '', v.signature, v.lag
        FROM unnest(${kept.map((x) => x.intent.id)}::bigint[], ${kept.map((x) => x.intent.policy)}::text[], ${kept.map((x) => x.intent.gateway)}::text[],
                    ${kept.map((x) => x.intent.signature ?? '')}::text[], ${kept.map((x) => Math.round(x.lagMs))}::bigint[]) AS v(id, policy, gateway, signature, lag)`.execute(trx);
    }
    return done;
  });
}
