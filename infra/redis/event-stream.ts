/**
 * Appending events to the stream. The indexer's appends are guarded by its cursor: each
 * names the cursor it expects to find stored (what it read when its round began, then
 * what its own previous append set) and the cursor past its events, and appends nothing
 * when the stored cursor is another. A transaction is thus appended by one writer only,
 * even with two indexers catching up from the same cursor: the one that comes second is
 * refused and starts its next round from the stored cursor. Consumers still deduplicate
 * on identity (projections/runner/checkpoint.ts), so a duplicate entry would cost work,
 * never correctness.
 */
import type { Redis } from 'ioredis';
import { serializeEvent, STREAM_FIELD, type SerializedEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import type { StreamKeys } from './client.js';
import { luaScript, runScript } from './scripts.js';

/**
 * Atomically: when a cursor is given, check the stored one against the expectation (refuse
 * with -1 when it differs), XADD every payload, then set the cursor, so a reader of the
 * cursor never sees it ahead of the stream. A stored cursor that already equals the new
 * one means this very step is in (a retried append whose first attempt landed): 0, and
 * nothing appended. An expected cursor of '' means none stored; then the stream's last
 * entry must still be the one expected ('' for an empty stream), so a writer that found
 * no cursor never appends past entries it did not know of.
 * KEYS[1] = stream; KEYS[2] = cursor key (the stream again when there is none).
 * ARGV[1] = field; ARGV[2] = new cursor value, '' for no cursor (no check); ARGV[3] =
 * expected cursor value; ARGV[4] = expected last entry id when no cursor is expected;
 * ARGV[5..] = payloads. Returns the number appended, or -1 when refused.
 */
const APPEND_SCRIPT = luaScript<number>('tributaryAppendEvents', `
if ARGV[2] ~= '' then
  local stored = redis.call('GET', KEYS[2])
  if stored == ARGV[2] then return 0 end
  if (stored or '') ~= ARGV[3] then return -1 end
  if not stored then
    local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
    if (last and last[1] or '') ~= ARGV[4] then return -1 end
  end
end
for i = 5, #ARGV do
  redis.call('XADD', KEYS[1], '*', ARGV[1], ARGV[i])
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2]) end
return #ARGV - 4
`);

/**
 * What a guarded append expects to find: the stored cursor's value, or, when there is
 * none, the id of the stream's last entry ('' for an empty stream).
 */
export type CursorExpectation = { stored: string } | { stored: null; lastEntryId: string };

/** A cursor move carried by an append: the key, the value to set, and what must be stored before. */
export interface CursorMove { key: string; value: string; expect: CursorExpectation }

/** The outcome of a guarded append: how many entries it wrote, or refused when the stored cursor was not the expected one. */
export type AppendResult = { refused: false; appended: number } | { refused: true };

/** Appends `events` unguarded (no cursor): for tests and tools that feed the stream directly. */
export async function appendEvents(redis: Redis, keys: StreamKeys, events: readonly TributaryEvent[]): Promise<number> {
  const r = await appendSerialized(redis, keys, events.map((e) => ({ id: e.id, payload: serializeEvent(e) })));
  return r.refused ? 0 : r.appended;
}

/**
 * Appends events already written as their entries' text (the indexer writes them so, from
 * the bytes) and, when `cursor` is given, moves it in the same step, or appends nothing
 * when the stored cursor is not the one expected.
 */
export async function appendSerialized(
  redis: Redis, keys: StreamKeys, events: readonly SerializedEvent[], cursor?: CursorMove,
): Promise<AppendResult> {
  if (events.length === 0 && !cursor) return { refused: false, appended: 0 };
  const args = [STREAM_FIELD, cursor?.value ?? '', cursor?.expect.stored ?? '', cursor && cursor.expect.stored === null ? cursor.expect.lastEntryId : ''];
  for (const e of events) args.push(e.payload);
  const n = await runScript(redis, APPEND_SCRIPT, [keys.events, cursor?.key ?? keys.events], args);
  return n < 0 ? { refused: true } : { refused: false, appended: n };
}

/** Appends with a pipeline of plain XADDs: for tests that feed duplicates on purpose. */
export async function appendRaw(redis: Redis, keys: StreamKeys, payloads: readonly string[]): Promise<void> {
  const pipe = redis.pipeline();
  for (const p of payloads) pipe.xadd(keys.events, '*', STREAM_FIELD, p);
  await pipe.exec();
}
