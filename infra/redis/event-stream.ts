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
 * value, '' for none; ARGV[4] = the n payloads, each followed by a newline (an entry is
 * JSON text, which never holds a raw newline). Returns the number appended; fails before
 * any write when ARGV[4] does not hold exactly n payloads.
 *
 * The payloads travel as one argument: ioredis measures and concatenates every argument
 * of a command one by one, and with two per event that was ~40% of the indexer's append
 * cost (profile in the commit that made it so).
 */
const APPEND_SCRIPT = luaScript<number>('tributaryAppendEventLines', `
local lines = ARGV[4]
local ends = {}
local at = 1
for i = 3, #KEYS do
  local e = string.find(lines, '\\n', at, true)
  if not e then return redis.error_reply('fewer payloads than seen keys') end
  ends[i] = e
  at = e + 1
end
if at ~= #lines + 1 then return redis.error_reply('more payloads than seen keys') end
local appended = 0
at = 1
for i = 3, #KEYS do
  if redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[1]) then
    redis.call('XADD', KEYS[1], '*', ARGV[2], string.sub(lines, at, ends[i] - 1))
    appended = appended + 1
  end
  at = ends[i] + 1
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
  const lines: string[] = [];
  for (const e of events) {
    keyList.push(keys.seen(e.id));
    lines.push(e.payload);
  }
  lines.push(''); // the last payload's newline
  return runScript(redis, APPEND_SCRIPT, keyList, [String(DEDUP_WINDOW_SECONDS), STREAM_FIELD, cursor?.value ?? '', lines.join('\n')]);
}

/** Appends without the dedup window: for tests that feed duplicates on purpose. */
export async function appendRaw(redis: Redis, keys: StreamKeys, payloads: readonly string[]): Promise<void> {
  const pipe = redis.pipeline();
  for (const p of payloads) pipe.xadd(keys.events, '*', STREAM_FIELD, p);
  await pipe.exec();
}
