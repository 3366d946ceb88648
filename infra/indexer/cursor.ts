/**
 * The indexer's cursor: the newest signature whose events are known to be in the
 * stream, with every older one. Kept in Redis beside the stream it describes, and moved
 * only by an append that names the cursor it expects to find (event-stream.ts).
 */
import type { Redis } from 'ioredis';
import { cursorKey } from '../../src/kernel/names/index.js';
import type { CursorExpectation, CursorMove } from '../redis/event-stream.js';
import { STREAM_FIELD } from '../../src/kernel/events/envelope.js';

export interface Cursor { signature: string; slot: number }

export { cursorKey };

function parseCursor(raw: string): Cursor | undefined {
  const parsed = JSON.parse(raw) as Partial<Cursor>;
  return typeof parsed.signature === 'string' && typeof parsed.slot === 'number'
    ? { signature: parsed.signature, slot: parsed.slot }
    : undefined;
}

export async function readCursor(redis: Redis, prefix: string): Promise<Cursor | undefined> {
  const raw = await redis.get(cursorKey(prefix));
  return raw ? parseCursor(raw) : undefined;
}

/** Where a round starts, and what its first append expects to find stored. */
export interface RoundStart {
  cursor: Cursor | undefined;
  expect: CursorExpectation;
  /** the cursor was missing and the round starts after the stream's last entry */
  fromStream: boolean;
}

/**
 * The stored cursor; when there is none, the transaction of the stream's last entry (a
 * cursor lost or deleted while the stream holds events: every transaction after it is
 * read again, none before, so nothing is appended twice); an empty stream starts from
 * the program's first transaction.
 */
export async function readRoundStart(redis: Redis, prefix: string, stream: string): Promise<RoundStart> {
  const raw = await redis.get(cursorKey(prefix));
  if (raw !== null) return { cursor: parseCursor(raw), expect: { stored: raw }, fromStream: false };
  const [last] = await redis.xrevrange(stream, '+', '-', 'COUNT', 1);
  if (!last) return { cursor: undefined, expect: { stored: null, lastEntryId: '' }, fromStream: false };
  const [id, fields] = last;
  const at = fields.indexOf(STREAM_FIELD);
  // an entry that names no transaction (not the indexer's) leaves the round to start from the first
  let cursor: Cursor | undefined;
  try {
    cursor = at >= 0 ? parseCursor(fields[at + 1] ?? '') : undefined;
  } catch {
    cursor = undefined;
  }
  return { cursor, expect: { stored: null, lastEntryId: id }, fromStream: cursor !== undefined };
}

/** The cursor move that an append past `cursor` carries (event-stream.ts: one atomic step). */
export function cursorMove(prefix: string, cursor: Cursor, expect: CursorExpectation): CursorMove {
  return { key: cursorKey(prefix), value: JSON.stringify(cursor), expect };
}
