/**
 * Execution intents keyed by the payment they make, and parked while a policy is paused.
 *
 * - payment_index: the policy's payment_count this intent's payment is made at (the chain
 *   counts every payment, so two milestones with one timestamp are two intents). -1 on
 *   rows from before it was kept, unless their stored payment_count_before says it: such
 *   a row is judged by its due date alone. The key becomes (policy, due_at, payment_index).
 * - status 'paused': an intent found paused waits, unclaimed, until the policy is seen
 *   Active again (intents.ts, unpark). Those dropped as PolicyPaused before are parked.
 * - payment_policy_status_history_changes_idx: the status changes (pause, resume) by
 *   slot, which the scheduler announces (subscription.paused / subscription.resumed).
 * - scheduler_gateways.signer_error: why the gateway's signer row does not open (only
 *   that gateway waits); null when it does. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE execution_intents ADD COLUMN payment_index integer NOT NULL DEFAULT -1`.execute(db);
  await sql`UPDATE execution_intents SET payment_index = payment_count_before WHERE payment_count_before IS NOT NULL`.execute(db);
  await sql`ALTER TABLE execution_intents DROP CONSTRAINT execution_intents_policy_due_key`.execute(db);
  await sql`ALTER TABLE execution_intents ADD CONSTRAINT execution_intents_policy_payment_key UNIQUE (policy, due_at, payment_index)`.execute(db);
  await sql`
    UPDATE execution_intents i SET status = 'paused'
    WHERE i.status = 'dropped' AND EXISTS (SELECT 1 FROM execution_attempts a WHERE a.intent_id = i.id AND a.reason_code = 'PolicyPaused')`.execute(db);
  await sql`CREATE INDEX execution_intents_paused_idx ON execution_intents (policy) WHERE status = 'paused'`.execute(db);
  await sql`CREATE INDEX payment_policy_status_history_changes_idx ON payment_policy_status_history (slot) WHERE cause = 'status_changed'`.execute(db);
  await sql`ALTER TABLE scheduler_gateways ADD COLUMN signer_error text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE scheduler_gateways DROP COLUMN IF EXISTS signer_error`.execute(db);
  await sql`DROP INDEX IF EXISTS payment_policy_status_history_changes_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS execution_intents_paused_idx`.execute(db);
  await sql`UPDATE execution_intents SET status = 'dropped' WHERE status = 'paused'`.execute(db);
  await sql`ALTER TABLE execution_intents DROP CONSTRAINT execution_intents_policy_payment_key`.execute(db);
  await sql`DELETE FROM execution_intents a USING execution_intents b WHERE a.policy = b.policy AND a.due_at = b.due_at AND a.id > b.id`.execute(db);
  await sql`ALTER TABLE execution_intents ADD CONSTRAINT execution_intents_policy_due_key UNIQUE (policy, due_at)`.execute(db);
  await sql`ALTER TABLE execution_intents DROP COLUMN payment_index`.execute(db);
}
