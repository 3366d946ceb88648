/**
 * Counts the statements the pg clients of this process send, by their text: a test's proof
 * that a write went in one statement, or touched no table it should not.
 */
import pg from '../../infra/postgres/pg.js';

export interface StatementCount {
  /** statements matched since the count began or was last reset */
  n: number;
  /** puts pg's own query back */
  restore(): void;
}

export function countStatements(match: (text: string) => boolean): StatementCount {
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const query = proto.query;
  const count: StatementCount = { n: 0, restore: () => { proto.query = query; } };
  proto.query = function counted(this: unknown, ...a: unknown[]) {
    const q = a[0] as string | { text?: string } | undefined;
    const text = typeof q === 'string' ? q : q?.text;
    if (text !== undefined && match(text)) count.n += 1;
    return query.apply(this, a);
  };
  return count;
}
