/**
 * Rows written on a hot path, grouped: while a statement is in flight, the rows of the
 * requests arriving meanwhile queue and go in the next statement together (one round trip
 * and one commit for all of them, as a group commit does). An idle path writes each row at
 * once, or at the end of the event loop's round (`round`), with the rows of the other
 * requests that round handled; a busy one writes fewer, larger statements. Each caller
 * still learns its own row's fate: when a group's statement fails, its rows are written one
 * by one, in the order they were asked, so one row's error (a constraint) is its caller's alone.
 */

import { backendsInDoubt, withBackendsInDoubt } from './prepared.js';

export interface GroupOptions {
  /** statements in flight at once (the rest queue for the next) */
  inFlight?: number;
  /** rows in one statement at most */
  max?: number;
  /**
   * a statement waits for the end of the event loop's round it was asked in (setImmediate), so
   * that the rows of the requests this round handled go together: the answers of one Redis
   * pipeline (meter-batch.ts) resume its requests in one round, and without this the first of
   * them went alone and the rest waited for it in the next statement
   */
  round?: boolean;
}

/**
 * `write` writes every row in one statement and answers each row's result (as `write`'s
 * answer maps it); rows of one group never exceed `max`.
 */
export function groupedCalls<T, R>(write: (rows: readonly T[]) => Promise<(row: T) => R>, opts: GroupOptions = {}): (row: T) => Promise<R> {
  const inFlight = opts.inFlight ?? 2;
  const max = opts.max ?? 200;
  let queue: { row: T; done: (r: R) => void; failed: (err: unknown) => void }[] = [];
  let busy = 0;
  let roundEnd = false;
  const settle = async (calls: typeof queue): Promise<void> => {
    try {
      const result = await write(calls.map((c) => c.row));
      for (const c of calls) c.done(result(c.row));
    } catch (err) {
      if (calls.length === 1) { calls[0]!.failed(err); return; }
      // one by one in the order they were asked, not all at once: where rows refuse each other (two
      // slices of one counter), the earlier one is written and the later refused, as with no grouping.
      // A row refused now may still be written by the group's statement, if its answer was lost
      // (prepared.ts): its error says so, and whoever takes it back waits for that statement first
      const group = backendsInDoubt(err);
      for (const c of calls) await write([c.row]).then((result) => c.done(result(c.row)), (e: unknown) => c.failed(withBackendsInDoubt(e, group)));
    }
  };
  const pump = (): void => {
    while (busy < inFlight && queue.length > 0) {
      const calls = queue.slice(0, max);
      queue = queue.slice(max);
      busy += 1;
      void settle(calls).finally(() => { busy -= 1; pump(); });
    }
  };
  return (row) => new Promise<R>((done, failed) => {
    queue.push({ row, done, failed });
    if (opts.round !== true) pump();
    else if (!roundEnd) {
      roundEnd = true;
      setImmediate(() => { roundEnd = false; pump(); });
    }
  });
}

/** `write` inserts every row in one statement; rows of one group never exceed `max`. */
export function groupedWrites<T>(write: (rows: readonly T[]) => Promise<void>, opts: GroupOptions = {}): (row: T) => Promise<void> {
  const none = (): void => undefined;
  return groupedCalls(async (rows: readonly T[]) => { await write(rows); return none; }, opts);
}
