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

export async function writeCursor(redis: Redis, prefix: string, cursor: Cursor): Promise<void> {
  await redis.set(cursorKey(prefix), JSON.stringify(cursor));
}
