/**
 * Appending events to the stream. The indexer may see a transaction twice (live and
 * backfill overlap, a restart, gap repair): an event whose identity was appended within
 * the dedup window is not appended again. Consumers still deduplicate on identity, so
 * the window is an optimisation of the stream, not the guarantee.
 */
import type { Redis } from 'ioredis';
import { serializeEvent, STREAM_FIELD, type SerializedEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { StreamKeys } from './client.js';
import { luaScript, runScript } from './scripts.js';

/**
 * Atomically: for each event, SET seen-key NX EX ttl, and XADD only when it was new; then
 * the writer's cursor, so a reader of the cursor never sees it ahead of the stream.
 * KEYS[1] = stream; KEYS[2] = cursor key (the stream again when there is none);
 * KEYS[3..n+2] = seen keys. ARGV[1] = ttl seconds; ARGV[2] = field; ARGV[3] = cursor
 * value, '' for none; ARGV[4..n+3] = payloads. Returns the number appended.
 */
const APPEND_SCRIPT = luaScript<number>('tributaryAppendEvents', `
local appended = 0
for i = 3, #KEYS do
  if redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[1]) then
    redis.call('XADD', KEYS[1], '*', ARGV[2], ARGV[i + 1])
    appended = appended + 1
  end
end
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[3]) end
return appended
`);

export const DEDUP_WINDOW_SECONDS = 7 * 24 * 3600;

/** Appends `events` (those not seen within the window) and, in the same step, sets `cursor` when given. */
export async function appendEvents(
  redis: Redis, keys: StreamKeys, events: readonly TributaryEvent[], cursor?: { key: string; value: string },
): Promise<number> {
  return appendSerialized(redis, keys, events.map((e) => ({ id: e.id, payload: serializeEvent(e) })), cursor);
}

/** appendEvents of events already written as their entries' text (the indexer writes them so, from the bytes). */
export async function appendSerialized(
  redis: Redis, keys: StreamKeys, events: readonly SerializedEvent[], cursor?: { key: string; value: string },
): Promise<number> {
  if (events.length === 0 && !cursor) return 0;
  const keyList = [keys.events, cursor?.key ?? keys.events];
  const args = [String(DEDUP_WINDOW_SECONDS), STREAM_FIELD, cursor?.value ?? ''];
  for (const e of events) {
    keyList.push(keys.seen(e.id));
    args.push(e.payload);
  }
  return runScript(redis, APPEND_SCRIPT, keyList, args);
}

/** Appends without the dedup window: for tests that feed duplicates on purpose. */
export async function appendRaw(redis: Redis, keys: StreamKeys, payloads: readonly string[]): Promise<void> {
  const pipe = redis.pipeline();
  for (const p of payloads) pipe.xadd(keys.events, '*', STREAM_FIELD, p);
  await pipe.exec();
}
