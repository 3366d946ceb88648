/**
 * Sealed secret columns, whatever their table: each kind's store describes its column (the
 * row id, the associated data, which rows are still opened), and this module seals the
 * rows kept in the clear (`plain:`, development mode) and finds the rows that do not open.
 * Neither ever logs or returns a secret: a row is named by its kind and id.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../postgres/database.js';
import type { Logger } from '../log/logger.js';
import { openSecret, PLAIN_PREFIX, sealPlainSecret, SecretBoxError } from '../crypto/secret-box.js';

export interface SecretColumn {
  /** what an operator reads: `signing key`, `webhook secret`, ... */
  readonly kind: string;
  readonly table: string;
  /** the column naming the row (a kid, a webhook id, an address) */
  readonly id: string;
  /** the sealed column */
  readonly column: string;
  /** the associated data the row's secret is sealed with */
  aad(id: string): string;
  /** the rows this service still opens at `nowMs` (a SQL condition); every row is sealed regardless */
  inUse(nowMs: number): RawBuilder<unknown>;
}

/** A secret that does not open, named by its kind and row (never the secret). */
export interface UnopenedSecret { kind: string; id: string; reason: string }

/** How many rows one statement reads (and one transaction seals): bounded memory whatever the table's size. */
const BATCH = 500;

// Ids are compared and ordered as the column's own type (the parameter's type is inferred
// from it; the text the rows are read as is named row_id, so ORDER BY names the column), so
// the primary key's index serves each row's UPDATE and each page.
const after = (col: SecretColumn, id: string | undefined) => (id === undefined ? sql`` : sql`AND ${sql.ref(col.id)} > ${id}`);

/**
 * Seals every `plain:` value of the column under `key`, one row at a time. Each UPDATE
 * names the exact value it read, so a row sealed (or rotated) by another node meanwhile
 * is left alone; several nodes may run this at once. Returns the ids this call sealed.
 */
export async function sealPlainColumn(db: Db, col: SecretColumn, key: Buffer, log?: Logger): Promise<string[]> {
  const sealed: string[] = [];
  let last: string | undefined;
  for (;;) {
    const { rows } = await sql<{ row_id: string; stored: string }>`
      SELECT ${sql.ref(col.id)}::text AS row_id, ${sql.ref(col.column)} AS stored FROM ${sql.table(col.table)}
      WHERE ${sql.ref(col.column)} LIKE ${`${PLAIN_PREFIX}%`} ${after(col, last)}
      ORDER BY ${sql.ref(col.id)} LIMIT ${BATCH}`.execute(db);
    // one transaction per page: one commit for its rows, each UPDATE still conditional on the value read
    const page = await db.transaction().execute(async (trx) => {
      const done: string[] = [];
      for (const r of rows) {
        const next = sealPlainSecret(r.stored, col.aad(r.row_id), key);
        if (next === undefined) continue;
        const u = await sql`
          UPDATE ${sql.table(col.table)} SET ${sql.ref(col.column)} = ${next}
          WHERE ${sql.ref(col.id)} = ${r.row_id} AND ${sql.ref(col.column)} = ${r.stored}`.execute(trx);
        if (Number(u.numAffectedRows ?? 0) === 1) done.push(r.row_id);
      }
      return done;
    });
    for (const id of page) {
      log?.info({ kind: col.kind, table: col.table, column: col.column, row: id }, 'plaintext secret sealed under SIGNING_KEY_ENCRYPTION_KEY');
    }
    sealed.push(...page);
    if (rows.length < BATCH) return sealed;
    last = rows.at(-1)!.row_id;
  }
}

/** How many values of the column are still kept in the clear. */
export async function countPlain(db: Db, col: SecretColumn): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM ${sql.table(col.table)} WHERE ${sql.ref(col.column)} LIKE ${`${PLAIN_PREFIX}%`}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** The rows in use whose secret does not open under `key` (wrong key, tampered row, no key). */
export async function unopenedSecrets(db: Db, col: SecretColumn, key: Buffer | undefined, nowMs: number): Promise<UnopenedSecret[]> {
  const out: UnopenedSecret[] = [];
  let last: string | undefined;
  for (;;) {
    const { rows } = await sql<{ row_id: string; stored: string }>`
      SELECT ${sql.ref(col.id)}::text AS row_id, ${sql.ref(col.column)} AS stored FROM ${sql.table(col.table)}
      WHERE ${sql.ref(col.column)} IS NOT NULL AND (${col.inUse(nowMs)}) ${after(col, last)}
      ORDER BY ${sql.ref(col.id)} LIMIT ${BATCH}`.execute(db);
    for (const r of rows) {
      try {
        openSecret(r.stored, col.aad(r.row_id), key);
      } catch (err) {
        out.push({ kind: col.kind, id: r.row_id, reason: err instanceof SecretBoxError ? err.reason : 'unreadable' });
      }
    }
    if (rows.length < BATCH) return out;
    last = rows.at(-1)!.row_id;
  }
}
