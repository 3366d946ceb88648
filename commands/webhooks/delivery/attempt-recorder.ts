/**
 * Group commit of attempt records: a delivery's record waits for no timer; while a write
 * is in flight the records that end meanwhile queue, and the next write takes them all in
 * one statement. Idle, a record is written at once; under load, statements and commits
 * grow fewer as deliveries grow more. A batch that fails (a delivery deleted while its
 * attempt ran) is written again one record at a time, so one row cannot fail the others.
 * Each write also deletes the fan-outs finished since the last one (`fanouts`).
 */
import type { Db } from '../../../infra/postgres/database.js';
import { recordAttempt, recordAttempts, type AttemptRecord, type NextState, type RecordOutcome } from './outbox-store.js';
import type { FanoutFinisher } from './fanouts.js';

/** `holder`: who must still hold the delivery's lease for it to move (the worker by default). */
export type RecordFn = (a: AttemptRecord, next: NextState, holder?: string) => Promise<RecordOutcome>;

interface Queued { a: AttemptRecord; next: NextState; holder: string; resolve(o: RecordOutcome): void; reject(e: unknown): void }

export function createAttemptRecorder(db: Db, worker: string, opts: { maxBatch?: number; parallel?: number; fanouts?: Pick<FanoutFinisher, 'take' | 'requeue'> } = {}): RecordFn {
  const maxBatch = opts.maxBatch ?? 500;
  const parallel = opts.parallel ?? 2;
  const queue: Queued[] = [];
  let writers = 0;

  async function write(batch: Queued[]): Promise<void> {
    const single = batch.length === 1 && batch[0]!.a.first === undefined;
    const finished = single ? [] : (opts.fanouts?.take() ?? []);
    try {
      const outcomes = single
        ? [await recordAttempt(db, batch[0]!.holder, batch[0]!.a, batch[0]!.next)]
        : await recordAttempts(db, batch, finished);
      batch.forEach((q, i) => q.resolve(outcomes[i]!));
    } catch {
      if (finished.length > 0) opts.fanouts?.requeue(finished);
      for (const q of batch) {
        try {
          q.resolve(await recordAttempt(db, q.holder, q.a, q.next));
        } catch (err) {
          q.reject(err);
        }
      }
    }
  }

  async function drain(): Promise<void> {
    writers += 1;
    try {
      while (queue.length > 0) await write(queue.splice(0, maxBatch));
    } finally {
      writers -= 1;
    }
  }

  return (a, next, holder = worker) => new Promise<RecordOutcome>((resolve, reject) => {
    queue.push({ a, next, holder, resolve, reject });
    if (writers < parallel) void drain();
  });
}
