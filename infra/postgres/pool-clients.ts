/**
 * kysely's PostgresPool over another pool, its clients' text queries answered by a
 * function of ours (named statements, COPY requests). kysely asks a pool client for two
 * things (its documented interface): `query(sql, parameters)` for a statement, and
 * `query(cursor)` for a stream, a pg custom query (Submittable) that runs on the client
 * as it is; the second passes through unchanged.
 */
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/** A client of the pool underneath: pg's own, or kysely's interface over it. */
interface InnerClient { query(submittable: never): unknown; release(): void }

export type TextQuery<C> = (client: C, sqlText: string, parameters: ReadonlyArray<unknown>) => Promise<PostgresQueryResult<unknown>>;

export function withTextQueries<C extends InnerClient>(pool: { connect(): Promise<C>; end(): Promise<void> }, text: TextQuery<C>): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      function query<R>(sqlText: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
      function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
      function query<R>(q: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
        if (typeof q !== 'string') return client.query(q as never) as PostgresCursor<R>;
        return text(client, q, parameters ?? []) as Promise<PostgresQueryResult<R>>;
      }
      return { query, release: () => client.release() };
    },
    end: () => pool.end(),
  };
}
