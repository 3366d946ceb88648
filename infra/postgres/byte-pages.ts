/**
 * Connections that hand a query's first cell over as the bytes Postgres sent, for the hot
 * list routes' pages (text-query.ts). pg decodes every text column into a JavaScript
 * string, which the API then encodes back into bytes for the socket: for a 20-70 KB page
 * most of the driver's CPU and garbage. postgres.js reads rows raw (each column a Buffer
 * over the message), so the page goes from the wire to the socket as it came.
 *
 * Parameters go as text, spelled here as pg spells them (textParams), with every type
 * left for the server to infer, as pg sends them: postgres.js's own serializers, chosen by
 * the server's parameter types, would re-encode a string bound to jsonb, bytea, a boolean
 * or a timestamp, so for this pool each is the identity on the text given.
 *
 * The contract used of postgres.js: `unsafe(text, params, { prepare })` runs `$n` SQL as a
 * named statement per connection when prepare is set (parsed once, planned from the plan
 * cache), `.raw()` gives each row as an array of Buffers (null for NULL), and `end()`
 * closes the pool; `max_pipeline` (parsed with its other options, though its types leave
 * it out) is how many queries it sends ahead on one connection.
 *
 * At most one query sent ahead per connection (max_pipeline 1). With more queries in
 * flight than connections, postgres.js by default pipelines up to 100 onto busy
 * connections, taking each off its `busy` queue with shift and putting it back, and its
 * queue (src/queue.js) leaves every shifted slot as a hole at the front of its array until
 * a shift empties the queue, which a queue that is refilled as it is shifted never is:
 * every connection that finishes is then found by indexOf through all those holes, and
 * the array grows without bound. 50 queries in flight on 10 connections cost 28 us of
 * CPU each in the first 2 s and 93 us after 12 s, falling to a third of the throughput.
 * With max_pipeline 1 a connection with a query sent ahead is full, so `busy` is emptied
 * by its shifts (and its holes dropped) all the time, and the rest wait in postgres.js's
 * FIFO for the next connection free: a flat 19 us a query, at 55,000 queries/s against
 * 38,000 falling to 11,000. The read mix keeps 50 requests in flight on DATABASE_POOL_MAX.
 */
import postgres from 'postgres';

export interface BytePages {
  /** The first column of the first row as Postgres sent it; undefined without a row or for NULL. */
  cell(text: string, params: readonly (string | null)[], prepare: boolean): Promise<Buffer | undefined>;
  end(): Promise<void>;
}

/** The oids whose postgres.js serializer is not the identity on text: json, jsonb, bool, bytea, date, timestamp, timestamptz. */
const REENCODED = [114, 3802, 16, 17, 1082, 1114, 1184];

/** one query sent ahead at most (see above): an option postgres.js reads but does not declare */
const ONE_QUERY_AHEAD = { max_pipeline: 1 };

export function createBytePages(url: string, max: number, applicationName: string, statementTimeoutMs: number | undefined): BytePages {
  const sql = postgres(url, {
    max,
    prepare: true,
    // array types are looked up for serializing arrays, which no parameter here is
    fetch_types: false,
    connect_timeout: 5,
    idle_timeout: 30,
    onnotice: () => undefined,
    ...ONE_QUERY_AHEAD,
    connection: {
      application_name: applicationName,
      ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
    },
    types: { text: { to: 25, from: REENCODED, serialize: (x: string) => x, parse: (x: string) => x } },
  });
  return {
    async cell(text, params, prepare) {
      const rows = await sql.unsafe(text, params as string[], { prepare }).raw();
      return rows[0]?.[0] ?? undefined;
    },
    end: () => sql.end({ timeout: 5 }),
  };
}

/**
 * Query parameters as the text pg sends for them (its prepareValue): a Buffer as bytea's
 * hex form, numbers, bigints and booleans as JavaScript prints them; undefined when one is
 * of another kind (an array, an object, a Date), which the caller then runs through pg.
 */
export function textParams(values: readonly unknown[]): (string | null)[] | undefined {
  const out: (string | null)[] = [];
  for (const v of values) {
    if (v === null || v === undefined) out.push(null);
    else if (typeof v === 'string') out.push(v);
    else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') out.push(String(v));
    else if (Buffer.isBuffer(v)) out.push(`\\x${v.toString('hex')}`);
    else return undefined;
  }
  return out;
}
