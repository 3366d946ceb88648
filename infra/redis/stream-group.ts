/**
 * The consumer-group side of the stream: reading, reclaiming and acknowledging entries.
 * Blocking reads use their own connection and a finite BLOCK (DESIGN.md).
 */
import type { Redis } from 'ioredis';
import { STREAM_FIELD } from '../../src/kernel/events/envelope.js';

export interface StreamEntry { streamId: string; payload: string | undefined }

type RawEntries = [string, string[] | null][];

function toEntries(raw: RawEntries | null | undefined): StreamEntry[] {
  if (!raw) return [];
  return raw.map(([streamId, fields]) => {
    let payload: string | undefined;
    if (fields) for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === STREAM_FIELD) payload = fields[i + 1];
    return { streamId, payload };
  });
}

export async function ensureGroup(redis: Redis, stream: string, group: string): Promise<void> {
  try {
    await redis.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
  } catch (err) {
    if (!String(err).includes('BUSYGROUP')) throw err;
  }
}

/** New entries (`>`) or this consumer's own pending ones (`0`). */
export async function readGroup(
  redis: Redis, stream: string, group: string, consumer: string, count: number, blockMs: number, which: '>' | '0',
): Promise<StreamEntry[]> {
  const res = await (which === '>'
    ? redis.xreadgroup('GROUP', group, consumer, 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', stream, '>')
    : redis.xreadgroup('GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '0'));
  return toEntries(res?.[0]?.[1]);
}

/** New entries already in the stream, without blocking (a backlog's next part). */
export async function readFreshNow(redis: Redis, stream: string, group: string, consumer: string, count: number): Promise<StreamEntry[]> {
  const res = await redis.xreadgroup('GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>');
  return toEntries(res?.[0]?.[1]);
}

/** Takes over entries that another (dead) consumer left pending for longer than minIdleMs. */
export async function autoClaim(
  redis: Redis, stream: string, group: string, consumer: string, minIdleMs: number, count: number,
): Promise<StreamEntry[]> {
  const claimed: StreamEntry[] = [];
  let cursor = '0-0';
  do {
    const res = (await redis.xautoclaim(stream, group, consumer, minIdleMs, cursor, 'COUNT', count)) as [string, RawEntries, string[]?];
    cursor = res[0];
    claimed.push(...toEntries(res[1]));
  } while (cursor !== '0-0' && claimed.length < count);
  return claimed;
}

export async function ack(redis: Redis, stream: string, group: string, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await redis.xack(stream, group, ...ids);
}

/** Redis stream ids compare as (milliseconds, sequence). */
export function compareStreamIds(a: string, b: string): number {
  // no arrays: the runner compares every entry of a batch (10k a transaction in a backlog)
  const ad = a.indexOf('-');
  const bd = b.indexOf('-');
  const am = Number(ad < 0 ? a : a.slice(0, ad));
  const bm = Number(bd < 0 ? b : b.slice(0, bd));
  return am - bm || (ad < 0 ? 0 : Number(a.slice(ad + 1))) - (bd < 0 ? 0 : Number(b.slice(bd + 1)));
}
