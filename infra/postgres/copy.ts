/**
 * COPY ... FROM STDIN inside a kysely transaction: the fastest way rows reach Postgres
 * (one text stream the server parses in bulk, no parameters, no per-row statements).
 *
 * kysely hands a query's `sql` to pg's client.query(), and pg runs any object with a
 * `submit` method as a custom query on that connection (as pg-cursor does for streams);
 * a COPY stream of pg-copy-streams is such an object. So the COPY runs on the
 * transaction's own connection, in its order, and commits or rolls back with it.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CompiledQuery, type Kysely } from 'kysely';
import copyStreams from 'pg-copy-streams';
import type { Database } from './schema.js';

export type CopyValue = string | number | bigint | boolean | Buffer | null | undefined;

const SPECIAL = /[\\\n\r\t]/;

/** One field in COPY's text format: \N for NULL, backslash escapes, bytea as \\x hex. */
export function copyField(v: CopyValue): string {
  if (v === null || v === undefined) return '\\N';
  if (Buffer.isBuffer(v)) return `\\\\x${v.toString('hex')}`;
  const s = typeof v === 'string' ? v : String(v);
  if (!SPECIAL.test(s)) return s;
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Lines of COPY text, a few hundred rows a chunk. */
function* chunks(rows: Iterable<readonly CopyValue[]>): Generator<string> {
  let buf = '';
  let n = 0;
  for (const row of rows) {
    buf += `${row.map(copyField).join('\t')}\n`;
    n += 1;
    if (n === 500) {
      yield buf;
      buf = '';
      n = 0;
    }
  }
  if (buf !== '') yield buf;
}

/** COPYs `rows` (values in `columns` order) into `table` on the connection of `trx`. */
export async function copyInto(
  trx: Kysely<Database>, table: string, columns: readonly string[], rows: Iterable<readonly CopyValue[]>,
): Promise<void> {
  const stream = copyStreams.from(`COPY ${ident(table)} (${columns.map(ident).join(', ')}) FROM STDIN`);
  const query: CompiledQuery = { ...CompiledQuery.raw(''), sql: stream as unknown as string };
  await trx.executeQuery(query);
  await pipeline(Readable.from(chunks(rows)), stream);
}
