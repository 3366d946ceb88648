/**
 * Rows written on a hot path, grouped: while a statement is in flight, the rows of the
 * requests arriving meanwhile queue and go in the next statement together (one round trip
 * and one commit for all of them, as a group commit does). An idle path writes each row at
 * once; a busy one writes fewer, larger statements. Each caller still learns its own row's
 * fate: when a group's statement fails, its rows are written one by one, so one row's
 * error (a constraint) is its caller's alone.
 */

/** `write` inserts every row in one statement; rows of one group never exceed `max`. */
export function groupedWrites<T>(write: (rows: readonly T[]) => Promise<void>, opts: { inFlight?: number; max?: number } = {}): (row: T) => Promise<void> {
  const inFlight = opts.inFlight ?? 2;
  const max = opts.max ?? 200;
  let queue: { row: T; done: () => void; failed: (err: unknown) => void }[] = [];
  let busy = 0;
  const settle = async (calls: typeof queue): Promise<void> => {
    try {
      await write(calls.map((c) => c.row));
      for (const c of calls) c.done();
    } catch (err) {
      if (calls.length === 1) { calls[0]!.failed(err); return; }
      await Promise.all(calls.map((c) => write([c.row]).then(c.done, c.failed)));
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
  return (row) => new Promise<void>((done, failed) => {
    queue.push({ row, done, failed });
    pump();
  });
}
