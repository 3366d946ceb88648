/**
 * Sealed secret columns, whatever their table: each kind's store describes its column (the
 * row id, the associated data, which rows are still opened), and this module seals under
 * the current key the rows kept in the clear (`plain:`, development mode) or under a
 * previous key (a rotated SIGNING_KEY_ENCRYPTION_KEY), and finds the rows that do not open.
 * Neither ever logs or returns a secret: a row is named by its kind and id.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../postgres/database.js';
import type { Logger } from '../log/logger.js';
import { PLAIN_PREFIX, resealSecret, SecretBoxError, unsealSecret } from '../crypto/secret-box.js';
import { hasPreviousKeys, type SecretKey } from '../../src/kernel/config/secret-key.js';

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

interface StoredRow { row_id: string; stored: string; in_use: boolean }

/**
 * The rows of the column matching `where`, a page at a time. Ids are compared and ordered
 * as the column's own type (the parameter's type is inferred from it; the text the rows
 * are read as is named row_id, so ORDER BY names the column), so the primary key's index
 * serves each row's UPDATE and each page. `in_use` is the column's inUse at `nowMs`
 * (true when no time is given).
 */
async function* pagesOf(db: Db, col: SecretColumn, where: RawBuilder<unknown>, nowMs?: number): AsyncGenerator<StoredRow[]> {
  const inUse = nowMs === undefined ? sql`TRUE` : col.inUse(nowMs);
  let last: string | undefined;
  for (;;) {
    const after = last === undefined ? sql`` : sql`AND ${sql.ref(col.id)} > ${last}`;
    const { rows } = await sql<StoredRow>`
      SELECT ${sql.ref(col.id)}::text AS row_id, ${sql.ref(col.column)} AS stored, (${inUse}) AS in_use FROM ${sql.table(col.table)}
      WHERE ${where} ${after}
      ORDER BY ${sql.ref(col.id)} LIMIT ${BATCH}`.execute(db);
    yield rows;
    if (rows.length < BATCH) return;
    last = rows.at(-1)!.row_id;
  }
}

const isPlain = (col: SecretColumn) => sql`${sql.ref(col.column)} LIKE ${`${PLAIN_PREFIX}%`}`;
const isSet = (col: SecretColumn) => sql`${sql.ref(col.column)} IS NOT NULL`;

/** The ids a re-sealing changed: from plaintext, and from a previous key. */
export interface ResealedRows { sealed: string[]; resealed: string[] }

const LOGGED = {
  plaintext: 'plaintext secret sealed under SIGNING_KEY_ENCRYPTION_KEY',
  'previous key': 'secret re-sealed from a previous key under SIGNING_KEY_ENCRYPTION_KEY',
} as const;

/**
 * Seals under the current key every value of the column kept in the clear, and, when the
 * key carries previous keys, every value that opens only under one of them; one row at a
 * time. Each UPDATE names the exact value it read, so a row sealed, re-sealed or rotated
 * by another node meanwhile is left alone; several nodes may run this at once. A value no
 * key opens is left as it is. Returns the ids this call changed.
 */
export async function resealColumn(db: Db, col: SecretColumn, key: SecretKey, log?: Logger): Promise<ResealedRows> {
  const out: ResealedRows = { sealed: [], resealed: [] };
  // without previous keys only plaintext can need sealing: the rows sealed already are not even read
  const where = hasPreviousKeys(key) ? isSet(col) : isPlain(col);
  for await (const rows of pagesOf(db, col, where)) {
    // one transaction per page: one commit for its rows, each UPDATE still conditional on the value read
    const page = await db.transaction().execute(async (trx) => {
      const done: { id: string; from: keyof typeof LOGGED }[] = [];
      for (const r of rows) {
        let next;
        try {
          next = resealSecret(r.stored, col.aad(r.row_id), key);
        } catch (err) {
          if (err instanceof SecretBoxError) continue; // opens under no key: reported by surveyColumn, never touched
          throw err;
        }
        if (next === undefined) continue;
        const u = await sql`
          UPDATE ${sql.table(col.table)} SET ${sql.ref(col.column)} = ${next.stored}
          WHERE ${sql.ref(col.id)} = ${r.row_id} AND ${sql.ref(col.column)} = ${r.stored}`.execute(trx);
        if (Number(u.numAffectedRows ?? 0) === 1) done.push({ id: r.row_id, from: next.from });
      }
      return done;
    });
    for (const { id, from } of page) {
      log?.info({ kind: col.kind, table: col.table, column: col.column, row: id, from }, LOGGED[from]);
      (from === 'plaintext' ? out.sealed : out.resealed).push(id);
    }
  }
  return out;
}

/** How many values of the column are still kept in the clear. */
export async function countPlain(db: Db, col: SecretColumn): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM ${sql.table(col.table)} WHERE ${isPlain(col)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** What opening every value of a column under a key finds. */
export interface ColumnSurvey {
  /** rows that open only under a previous key: they stop opening when it is removed */
  underPreviousKey: string[];
  /** rows in use at the survey's time that open under no key */
  unopened: UnopenedSecret[];
  /** rows no longer in use that open under no key (nothing reads them) */
  unopenedNotInUse: number;
}

/**
 * Opens the column's values under `key`: every row (`all`) or only the rows in use at
 * `nowMs`. Reads every row it covers, so it costs one decryption per row.
 */
export async function surveyColumn(db: Db, col: SecretColumn, key: SecretKey | undefined, nowMs: number, rows: 'all' | 'in use'): Promise<ColumnSurvey> {
  const out: ColumnSurvey = { underPreviousKey: [], unopened: [], unopenedNotInUse: 0 };
  const where = rows === 'all' ? isSet(col) : sql`${isSet(col)} AND (${col.inUse(nowMs)})`;
  for await (const page of pagesOf(db, col, where, nowMs)) {
    for (const r of page) {
      try {
        if (unsealSecret(r.stored, col.aad(r.row_id), key).under === 'previous key') out.underPreviousKey.push(r.row_id);
      } catch (err) {
        if (!r.in_use) out.unopenedNotInUse += 1;
        else out.unopened.push({ kind: col.kind, id: r.row_id, reason: err instanceof SecretBoxError ? err.reason : 'unreadable' });
      }
    }
  }
  return out;
}

/** The rows in use whose secret does not open under `key` (wrong key, tampered row, no key). */
export async function unopenedSecrets(db: Db, col: SecretColumn, key: SecretKey | undefined, nowMs: number): Promise<UnopenedSecret[]> {
  return (await surveyColumn(db, col, key, nowMs, 'in use')).unopened;
}
