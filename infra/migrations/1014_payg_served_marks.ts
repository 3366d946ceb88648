/**
 * Served marks kept once per API process instead of once per row. Frozen.
 *
 * A metered request's row was marked served by an UPDATE of its own (reserved_until set to
 * NULL), grouped every 10 ms: a second version of every row and a statement stream beside the
 * rows' (about a third of the ledger's Postgres CPU in the x402 bench). Now each process
 * numbers the rows it writes (served_by: the process, served_seq: its count) and keeps one row
 * in payg_served_marks: every row of it numbered up to served_through was answered, served
 * unless its number is in `unserved` (rows whose take-back is not confirmed yet). A row is
 * served when reserved_until is NULL (marked the old way, or folded in when it is charged or
 * found unbillable) or its process's mark covers it: payg_usage_served(row), the one
 * definition the settler, the reconciliation and the checks use
 * (commands/settlement/served-marks.ts writes the marks).
 *
 * payg_usage's rows are no longer rewritten milliseconds after their insert: 1012's room for
 * that is given back (the default fillfactor). down() folds every covered row first, so that
 * the marks it drops leave no served row a reservation.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_usage ADD COLUMN served_by bigint, ADD COLUMN served_seq bigint`.execute(db);
  await sql`CREATE TABLE payg_served_marks (
    node bigint PRIMARY KEY,
    served_through bigint NOT NULL,
    unserved bigint[] NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now())`.execute(db);
  // the one definition of a served row, for the settler, the reconciliation and the checks
  await sql`CREATE FUNCTION payg_usage_served(u payg_usage) RETURNS boolean LANGUAGE sql STABLE AS $fn$
    SELECT u.reserved_until IS NULL OR EXISTS (SELECT 1 FROM payg_served_marks m
      WHERE m.node = u.served_by AND u.served_seq <= m.served_through AND u.served_seq <> ALL (m.unserved))
    $fn$`.execute(db);
  await sql`ALTER TABLE payg_usage RESET (fillfactor)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`UPDATE payg_usage u SET reserved_until = NULL FROM payg_served_marks m
    WHERE u.reserved_until IS NOT NULL AND m.node = u.served_by AND u.served_seq <= m.served_through AND u.served_seq <> ALL (m.unserved)`.execute(db);
  await sql`DROP FUNCTION payg_usage_served(payg_usage)`.execute(db);
  await sql`DROP TABLE payg_served_marks`.execute(db);
  await sql`ALTER TABLE payg_usage DROP COLUMN served_by, DROP COLUMN served_seq`.execute(db);
  await sql`ALTER TABLE payg_usage SET (fillfactor = 50)`.execute(db);
}
