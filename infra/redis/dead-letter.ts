/** Entries that failed N times leave the group for a dead-letter stream, with their error. */
import type { Redis } from 'ioredis';
import type { StreamKeys } from './client.js';

export async function countAttempt(redis: Redis, keys: StreamKeys, group: string, streamId: string): Promise<number> {
  const key = keys.attempts(group);
  const n = await redis.hincrby(key, streamId, 1);
  await redis.expire(key, 7 * 24 * 3600);
  return n;
}

export async function clearAttempts(redis: Redis, keys: StreamKeys, group: string, streamIds: readonly string[]): Promise<void> {
  if (streamIds.length > 0) await redis.hdel(keys.attempts(group), ...streamIds);
}

export async function deadLetter(
  redis: Redis, keys: StreamKeys, group: string, streamId: string, payload: string | undefined, error: string, attempts: number,
): Promise<void> {
  await redis
    .multi()
    .xadd(keys.deadLetters(group), '*', 'stream_id', streamId, 'entry', payload ?? '', 'error', error.slice(0, 2000), 'attempts', String(attempts), 'at', new Date().toISOString())
    .xack(keys.events, group, streamId)
    .hdel(keys.attempts(group), streamId)
    .exec();
}

export async function deadLetterCount(redis: Redis, keys: StreamKeys, group: string): Promise<number> {
  return redis.xlen(keys.deadLetters(group));
}
