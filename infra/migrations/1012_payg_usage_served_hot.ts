/**
 * Room on each page of payg_usage for every row's served mark. A metered request's row is
 * inserted as a reservation and marked served (reserved_until set to NULL) milliseconds later;
 * the mark is a heap-only (HOT) update, one that leaves the row's five index entries alone,
 * only when the row's new version fits on its page. 0998's fillfactor of 90 left room for the
 * marks of three or four of a page's thirty-odd rows: in the x402 bench 27% of the marks were
 * HOT, and each of the others wrote a new entry in every index. At 50 each row's mark fits
 * beside it: 100% HOT, and a mark's Postgres CPU about 16 µs a row instead of 40 (a probe of
 * 11-row inserts then 33-row marks). The table's new pages start half full; a row's later
 * versions (its charge) go where vacuum finds room. Applies to pages filled from now on. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_usage SET (fillfactor = 50)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE payg_usage SET (fillfactor = 90)`.execute(db);
}
