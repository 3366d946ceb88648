/**
 * A pool whose queries run as named (prepared) statements: each distinct SQL text gets a
 * name once per process, and pg parses it once per connection, then only binds and
 * executes it. Postgres skips parsing and, after a few executions, planning too (plan
 * cache, a generic plan when it costs no more), the work pgbench's `-M prepared` skips.
 *
 * For the query routes' read pool: a bounded set of statement shapes, each run many
 * times. Texts past MAX_NAMED run unnamed, so a caller that builds unbounded distinct
 * texts cannot grow each connection's statements without bound.
 */
import type { PostgresPool, PostgresQueryResult } from 'kysely';
import type pg from './pg.js';
import { withTextQueries } from './pool-clients.js';

const MAX_NAMED = 1000;

/**
 * The names of one pool's statements. Every path onto the pool's connections takes its
 * names from here (kysely's, text-query.ts's): pg refuses a name prepared on a connection
 * with another text.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();

  /** The text's name; undefined past MAX_NAMED distinct texts (run it unnamed). */
  of(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_NAMED) {
      name = `tq${this.names.size + 1}`;
      this.names.set(text, name);
    }
    return name;
  }
}

export function withNamedStatements(pool: pg.Pool, names: StatementNames): PostgresPool {
  return withTextQueries<pg.PoolClient>(pool, (client, q, parameters) => {
    const name = names.of(q);
    const values = [...parameters];
    return (name === undefined ? client.query(q, values) : client.query({ name, text: q, values })) as unknown as Promise<PostgresQueryResult<unknown>>;
  });
}
