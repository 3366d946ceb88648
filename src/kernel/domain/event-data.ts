/**
 * Typed reads of decoded event data (codec.ts's JSON form). A field of the wrong type
 * means the event does not match the IDL: that is a bug or a poison entry, so these
 * throw, and the runner sends the entry to the dead-letter stream.
 */
import type { EventData, Json } from '../events/codec.js';

export function field(d: EventData, k: string): Json {
  const v = d[k];
  if (v === undefined) throw new Error(`event data has no field ${k}`);
  return v;
}

export function text(d: EventData, k: string): string {
  const v = field(d, k);
  if (typeof v !== 'string') throw new Error(`event field ${k} is not a string`);
  return v;
}

/** A u64/i64 field (decimal string) as a bigint. */
export function big(d: EventData, k: string): bigint {
  const v = field(d, k);
  if (typeof v !== 'string' && typeof v !== 'number') throw new Error(`event field ${k} is not an integer`);
  return BigInt(v);
}

export function int(d: EventData, k: string): number {
  const v = field(d, k);
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`event field ${k} is not an integer`);
  return v;
}

/**
 * The time basis of a payment for stats and time filters: the block time, as the events
 * API filters by it, else the program's clock carried in the event's `timestamp`.
 */
export function paymentAt(e: { blockTime: number | null; data: { timestamp: string } }): bigint {
  return e.blockTime !== null ? BigInt(e.blockTime) : BigInt(e.data.timestamp);
}

/** Days since 1970-01-01 UTC of unix seconds (floor, also before 1970). */
export function epochDay(seconds: bigint): bigint {
  const q = seconds / 86_400n;
  return seconds < 0n && q * 86_400n !== seconds ? q - 1n : q;
}

/** Text for a Postgres text column, which cannot hold NUL: a memo or name with inner NULs keeps the rest. */
export function pgText(s: string): string {
  return s.includes('\u0000') ? s.replace(/\u0000/g, '') : s;
}
