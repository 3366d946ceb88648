/**
 * Prepaid draws recorded ahead (commands/x402/meter-pool.ts) are reservations until served. Frozen.
 *
 * A draw written as its request comes is a draw at once (reserved_until NULL), as before. A row
 * recorded ahead for a busy credit is written before any request takes it: it carries
 * reserved_until and its process's number (served_by, served_seq), and counts as drawn only once
 * that process's served mark covers it (payg_served_marks, migration 1014; the mark's row is the
 * credit ledger's own process id). A row no request took is deleted by its process; one a dead
 * process left is deleted by the settler once reserved_until has passed (the payer keeps the
 * credit, given back when its counter is rebuilt from the ledger). Its slice is held all along,
 * so the credit is never drawn past what it holds.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE prepaid_usage ADD COLUMN reserved_until timestamptz, ADD COLUMN served_by bigint, ADD COLUMN served_seq bigint`.execute(db);
  await sql`CREATE INDEX prepaid_usage_reserved_idx ON prepaid_usage (reserved_until) WHERE reserved_until IS NOT NULL`.execute(db);
  await sql`CREATE FUNCTION prepaid_usage_served(u prepaid_usage) RETURNS boolean LANGUAGE sql STABLE AS $fn$
    SELECT u.reserved_until IS NULL OR EXISTS (SELECT 1 FROM payg_served_marks m
      WHERE m.node = u.served_by AND u.served_seq <= m.served_through AND u.served_seq <> ALL (m.unserved))
    $fn$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // rows served keep their draw; rows never taken leave
  await sql`DELETE FROM prepaid_usage u WHERE NOT prepaid_usage_served(u)`.execute(db);
  await sql`DROP FUNCTION prepaid_usage_served(prepaid_usage)`.execute(db);
  await sql`DROP INDEX prepaid_usage_reserved_idx`.execute(db);
  await sql`ALTER TABLE prepaid_usage DROP COLUMN reserved_until, DROP COLUMN served_by, DROP COLUMN served_seq`.execute(db);
}
