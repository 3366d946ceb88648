/**
 * payments_unfilled_idx: the composable executions still waiting for their policy's memo
 * (indexed before the policy's creation, a stream out of chain order), by policy. The
 * payments model looks for them whenever a batch creates a composable policy; it found
 * them through payments_policy_idx, every row of the policy read to keep those few. This
 * index holds only them, usually none, and a PaymentRecord row never enters it.
 *
 * With it, a replay of the model into fresh tables needs no other index while its rows
 * go in, and builds payments_policy_idx (the API's executions of a policy) and the
 * primary key once they are in (projections/payments/projection.ts). Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX payments_unfilled_idx ON payments (policy) WHERE kind = 'ComposableExecuted' AND memo IS NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS payments_unfilled_idx`.execute(db);
}
