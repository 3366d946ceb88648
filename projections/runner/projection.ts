/**
 * What a projection is: a name (its consumer group and checkpoint), the tables it owns,
 * and an apply function that folds a batch of new events into them inside the runner's
 * transaction. Apply never reads the clock: everything it writes is derived from
 * events, so a replay builds exactly what the live run built.
 */
import type { Transaction } from 'kysely';
import type { Redis } from 'ioredis';
import type { Database } from '../../infra/postgres/schema.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { EventName } from '../../src/kernel/events/catalog.js';

export type Trx = Transaction<Database>;

/** The runner's Redis, for a projection that signals others once its batch is durable. */
export interface ProjectionIo { redis: Redis; keys: StreamKeys }

/**
 * Run by the runner after the batch's transaction committed and before it is
 * acknowledged; its failure is logged, never retried (what it does must be optional).
 */
export type AfterCommit = () => Promise<void>;

/** What apply returns: the read scopes it touched, a step to run after commit, or nothing. */
export type ApplyResult = ReadonlySet<string> | AfterCommit | undefined | void;

export interface Projection {
  readonly name: string;
  /**
   * tables it owns, parents first; emptied and rebuilt by replay, hashed by the digest.
   * `deferredIndexes`: indexes apply never needs in a replay, which a replay into fresh
   * tables (replay-fresh.ts) builds once the rows are in; every other index is there while
   * the rows go in, so apply's lookups never scan a growing table. A unique index belongs
   * here only when apply neither upserts on it nor counts on it to refuse a duplicate in a
   * replay (a row keyed by its event's id: the archive's ids are unique); built last, it
   * still fails the replay on a duplicate, and the old model stays.
   */
  readonly tables: readonly { name: string; orderBy: string; volatile?: readonly string[]; deferredIndexes?: readonly string[] }[];
  /**
   * True when the projection's own rows absorb duplicates (the archive's primary key).
   * Otherwise the runner filters batches through projection_dedup before apply.
   */
  readonly selfDeduplicating?: boolean;
  /**
   * Events whose identity the projection's own rows absorb, the others going through
   * projection_dedup: each of these names is written as one row of `table` keyed by the
   * event id (`idColumn`, unique) and never changed by a second copy of its event (ON
   * CONFLICT DO NOTHING), so a redelivery changes nothing without the dedup set's row, its
   * index entry and its statement. Replay leaves them out of the set too, and before it
   * starts checks that every id in `table` is archived, as it does the set's.
   */
  readonly absorbs?: { readonly names: readonly EventName[]; readonly table: string; readonly idColumn: string };
  /** False for the replay source itself. */
  readonly replayable: boolean;
  /**
   * Returns either the keys (src/kernel/names/read-scopes.ts) whose answers the batch may
   * have changed, old and new values of every row it wrote, so that API nodes expire only
   * those cached answers, or an AfterCommit step (a function) the runner runs after the
   * commit; nothing (undefined) when it does not say, and then every cached answer of the
   * model expires. `io` is given by the runner (not by replay or bulk loads).
   */
  apply(trx: Trx, events: readonly TributaryEvent[], io?: ProjectionIo): Promise<ApplyResult>;
}

/** A replayable projection of one table that folds events one at a time, in stream order. */
export function eventByEventProjection(
  name: string,
  table: { name: string; orderBy: string },
  applyOne: (trx: Trx, e: TributaryEvent) => Promise<unknown>,
): Projection {
  return {
    name,
    tables: [table],
    replayable: true,
    async apply(trx, events) {
      for (const e of events) await applyOne(trx, e);
    },
  };
}
