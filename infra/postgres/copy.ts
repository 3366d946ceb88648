/**
 * COPY ... FROM STDIN inside a kysely transaction: the fastest way rows reach Postgres
 * (one text stream the server parses in bulk, no parameters, no per-row statements).
 *
 * kysely has no public handle on a transaction's connection, but it does document what it
 * asks of the dialect's pool (PostgresPool): `client.query(sql, parameters)` on the
 * connection the transaction holds. So copyInto sends the COPY's text with one parameter,
 * a CopyRequest, through `trx.executeQuery`; the pool of every Db (withCopy, wrapped in
 * createDb) hands that request's stream to pg as a custom query on the same connection,
 * the way pg-cursor streams run. The COPY therefore runs in the transaction's order and
 * commits or rolls back with it. A Db whose pool is not wrapped cannot run it: copyInto
 * then fails with a message that says so (test/integration/postgres-copy.test.ts).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CompiledQuery, type PostgresCursor, type PostgresPool, type Transaction } from 'kysely';
import copyStreams from 'pg-copy-streams';
import type { Database } from './schema.js';
import { withTextQueries } from './pool-clients.js';

export type CopyValue = string | number | bigint | boolean | Buffer | null | undefined;


/** NULL in COPY's text format. */
export const COPY_NULL = '\\N';

/** One text field in COPY's text format (never NULL): only what must be escaped is. */
export function copyText(s: string): string {
  // four searches for one character each: far faster than one regex over a long text (a payment's doc)
  if (!s.includes('\\') && !s.includes('\n') && !s.includes('\t') && !s.includes('\r')) return s;
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
}

/** One field in COPY's text format: \N for NULL, backslash escapes, bytea as \\x hex. */
export function copyField(v: CopyValue): string {
  if (v === null || v === undefined) return COPY_NULL;
  if (Buffer.isBuffer(v)) return `\\\\x${v.toString('hex')}`;
  return copyText(typeof v === 'string' ? v : String(v));
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** One row as a line of COPY text. */
export function copyLine(row: readonly CopyValue[]): string {
  return `${row.map(copyField).join('\t')}\n`;
}

function* linesOf(rows: Iterable<readonly CopyValue[]>): Generator<string> {
  for (const row of rows) yield copyLine(row);
}

/** Bytes of COPY text a chunk holds, about (the socket takes it as one write). */
const CHUNK_BYTES = 256 * 1024;

/** UTF-8 bytes of one UTF-16 code unit, at most (a lone surrogate: the 3 of U+FFFD). */
const MAX_UTF8_PER_UNIT = 3;

/**
 * Lines of COPY text as bytes, about CHUNK_BYTES a chunk, each line encoded into the
 * chunk as it comes: what waits in the stream's buffers is bytes outside the JS heap, not
 * ropes of a few hundred lines whose many small strings every young-generation collection
 * would copy (the live payments build spent a third of this process's time in those
 * collections), and no chunk-long string is built to be encoded.
 */
function* chunks(lines: Iterable<string>): Generator<Buffer> {
  let buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let at = 0;
  for (const line of lines) {
    if (at + line.length * MAX_UTF8_PER_UNIT > buf.length) {
      if (at > 0) yield buf.subarray(0, at);
      buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, line.length * MAX_UTF8_PER_UNIT));
      at = 0;
    }
    at += buf.write(line, at);
  }
  if (at > 0) yield buf.subarray(0, at);
}

/** A COPY stream waiting for the connection of the transaction that asked for it. */
class CopyRequest {
  submitted = false;
  constructor(readonly stream: ReturnType<typeof copyStreams.from>) {}
}

/**
 * kysely's pool with clients that run a CopyRequest: the request's stream goes to the
 * client as a pg custom query (the inner client runs a pg Submittable given alone, as pg's
 * own client does and kysely's cursors rely on), and the answer is an empty result at
 * once: the rows travel afterwards, through the stream. Any other query passes unchanged.
 */
export function withCopy(pool: PostgresPool): PostgresPool {
  return withTextQueries(pool, (client, q, parameters) => {
    const request = parameters.length === 1 ? parameters[0] : undefined;
    if (!(request instanceof CopyRequest)) return client.query(q, parameters);
    client.query(request.stream as unknown as PostgresCursor<unknown>);
    request.submitted = true;
    // kysely reads rows, and a row count for writes only: a COPY's count comes with its stream
    return Promise.resolve({ command: 'SELECT', rowCount: 0, rows: [] });
  });
}

/**
 * COPYs `rows` (values in `columns` order) into `table` on the connection of `trx`. A
 * transaction, not a Db: a Db would give the connection back to its pool while the rows
 * still stream into it.
 */
export async function copyInto(
  trx: Transaction<Database>, table: string, columns: readonly string[], rows: Iterable<readonly CopyValue[]>,
): Promise<void> {
  await copyLinesInto(trx, table, columns, linesOf(rows));
}

/**
 * copyInto for rows already rendered as lines of COPY text (copyLine's format: fields
 * escaped as copyField does, separated by tabs, each line ended by a newline), for a
 * writer that renders its rows faster than a values array per row.
 */
export async function copyLinesInto(
  trx: Transaction<Database>, table: string, columns: readonly string[], lines: Iterable<string>,
): Promise<void> {
  const text = `COPY ${ident(table)} (${columns.map(ident).join(', ')}) FROM STDIN`;
  const request = new CopyRequest(copyStreams.from(text));
  let refused: unknown;
  try {
    await trx.executeQuery(CompiledQuery.raw(text, [request]));
  } catch (err) {
    if (request.submitted) throw err;
    refused = err;
  }
  if (!request.submitted) {
    throw new Error(`COPY into ${table}: this Db's pool cannot run COPY requests; build it with createDb (infra/postgres/database.ts), whose pool withCopy wraps`, { cause: refused });
  }
  await pipeline(Readable.from(chunks(lines), { objectMode: false, highWaterMark: CHUNK_BYTES }), request.stream);
}
