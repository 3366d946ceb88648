/**
 * One batch of a projection: applied and checkpointed in one Postgres transaction, its
 * read-model versions bumped before its acknowledgement, and, when it fails, its entries
 * applied one by one so that only a poison entry reaches the dead-letter stream.
 */
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { Db } from '../../infra/postgres/database.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { Logger } from '../../infra/log/logger.js';
import { parseEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { AfterCommit, Projection, ProjectionIo } from './projection.js';
import { advanceCheckpoint, filterNew, lockShared } from './checkpoint.js';
import { ack, compareStreamIds, type StreamEntry } from '../../infra/redis/stream-group.js';
import { clearAttempts, countAttempt, deadLetter } from '../../infra/redis/dead-letter.js';
import { bumpReadVersions } from '../../infra/cache/read-cache.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Tries of a read-version bump before the batch is left unacknowledged, and the step between them. */
const BUMP_ATTEMPTS = 5;
const BUMP_RETRY_MS = 100;

/** What a committed batch changed: how many events it applied, and the keys they touched (undefined: any). */
export interface Applied { count: number; scopes: ReadonlySet<string> | undefined }

export interface ParsedEntry { streamId: string; event: TributaryEvent }

/** A running projection's collaborators and counters, as its batches see them. */
export interface BatchCtx {
  db: Db;
  redis: Redis;
  keys: StreamKeys;
  group: string;
  projection: Projection;
  io: ProjectionIo;
  log: Logger;
  stats: { applied: number; batches: number; deadLettered: number; failures: number };
  maxAttempts: number;
  stopping: () => boolean;
  /** marks the group's pending list to be read again (an entry left unacknowledged) */
  setPending: (v: boolean) => void;
}

export async function applyBatch(db: Db, projection: Projection, entries: readonly ParsedEntry[], io: ProjectionIo, log: Logger): Promise<Applied> {
  const last = entries.reduce((m, e) => (compareStreamIds(e.streamId, m) > 0 ? e.streamId : m), '0-0');
  let after: AfterCommit | undefined;
  const applied = await db.transaction().execute(async (trx) => {
    await lockShared(trx, projection.name);
    const events = entries.map((e) => e.event);
    const fresh = projection.selfDeduplicating ? events : await filterNew(trx, projection.name, events, projection.absorbs?.names);
    const result = fresh.length > 0 ? await projection.apply(trx, fresh, io) : new Set<string>();
    if (typeof result === 'function') after = result;
    const scopes = typeof result === 'function' ? undefined : result;
    await advanceCheckpoint(trx, projection.name, last, fresh.length);
    return { count: fresh.length, scopes: scopes ?? undefined };
  });
  if (after) await after().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'after-commit step failed; skipped'));
  return applied;
}

export async function databaseAnswers(db: Db): Promise<boolean> {
  try {
    await sql`SELECT 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

export const parseEntry = (entry: StreamEntry): TributaryEvent | Error => {
  try {
    return parseEvent(entry.payload ?? '');
  } catch (err) {
    return err as Error;
  }
};

export async function deadLetterEntry(c: BatchCtx, entry: StreamEntry, error: string, attempts: number): Promise<void> {
  await deadLetter(c.redis, c.keys, c.group, entry.streamId, entry.payload, error, attempts);
  c.stats.deadLettered += 1;
  c.log.error({ streamId: entry.streamId, error, attempts }, 'entry sent to the dead-letter stream');
}

/**
 * After a commit that changed the read model: its versions move (the model's, and those
 * of the keys the batch touched), so API nodes stop serving cached answers computed
 * before it (read-cache.ts). Bumped before the ack, so a caught-up group means bumped
 * versions, and retried a few times. A batch delivered again (`redelivered`: taken over
 * or left pending) may have been committed by a run whose bump was lost; nothing then
 * says which keys it touched, and the model's epoch moves instead. False: the bump could
 * not be made; the caller leaves the batch unacknowledged, to be delivered again.
 */
export async function bumpVersion(c: BatchCtx, applied: Applied, redelivered: boolean): Promise<boolean> {
  if (applied.count === 0 && !redelivered) return true;
  const scopes = redelivered ? undefined : applied.scopes;
  for (let attempt = 1; ; attempt += 1) {
    if (await bumpReadVersions(c.redis, c.keys, c.group, scopes)) return true;
    if (attempt >= BUMP_ATTEMPTS || c.stopping()) {
      c.log.warn('could not bump the read model version; the batch is left unacknowledged and, delivered again, moves the epoch');
      return false;
    }
    await sleep(BUMP_RETRY_MS * attempt);
  }
}

/** Bumps the batch's versions, then acknowledges it; true once acknowledged, false when it is left pending. */
export async function settleBatch(c: BatchCtx, applied: Applied, ids: readonly string[], redelivered: boolean, clear: boolean): Promise<boolean> {
  try {
    if (!(await bumpVersion(c, applied, redelivered))) { c.setPending(true); return false; }
    await ack(c.redis, c.keys.events, c.group, ids);
    if (clear) await clearAttempts(c.redis, c.keys, c.group, ids);
    return true;
  } catch (err) {
    c.log.warn({ err: (err as Error).message }, 'could not acknowledge a committed batch; it is delivered again');
    c.setPending(true);
    return false;
  }
}

/** After a failed batch: its entries one by one; one that keeps failing goes to the dead-letter stream after maxAttempts. */
export async function applyOneByOne(c: BatchCtx, parsed: readonly ParsedEntry[], redelivered: boolean): Promise<void> {
  for (const p of parsed) {
    try {
      const applied = await applyBatch(c.db, c.projection, [p], c.io, c.log);
      c.stats.applied += applied.count;
      if (!(await bumpVersion(c, applied, redelivered))) { c.setPending(true); return; }
      await ack(c.redis, c.keys.events, c.group, [p.streamId]);
    } catch (err) {
      if (!(await databaseAnswers(c.db))) { c.setPending(true); return; }
      const attempts = await countAttempt(c.redis, c.keys, c.group, p.streamId);
      if (attempts >= c.maxAttempts) {
        await deadLetterEntry(c, { streamId: p.streamId, payload: JSON.stringify(p.event) }, (err as Error).message, attempts);
      } else {
        c.setPending(true);
        await sleep(Math.min(100 * attempts, 2000));
      }
    }
  }
}
