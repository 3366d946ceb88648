/**
 * The indexer's cursor: the newest signature whose events are known to be in the
 * stream, with every older one. Kept in Redis beside the stream it describes.
 */
import type { Redis } from 'ioredis';
import { cursorKey } from '../../src/kernel/keys/index.js';

export interface Cursor { signature: string; slot: number }

export { cursorKey };

export async function readCursor(redis: Redis, prefix: string): Promise<Cursor | undefined> {
  const raw = await redis.get(cursorKey(prefix));
  if (!raw) return undefined;
  const parsed = JSON.parse(raw) as Partial<Cursor>;
  return typeof parsed.signature === 'string' && typeof parsed.slot === 'number'
    ? { signature: parsed.signature, slot: parsed.slot }
    : undefined;
}

/** The cursor as stored, for the append that carries its events (event-stream.ts: one atomic step). */
export function cursorEntry(prefix: string, cursor: Cursor): { key: string; value: string } {
  return { key: cursorKey(prefix), value: JSON.stringify(cursor) };
}
