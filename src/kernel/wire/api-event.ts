/**
 * The event as the API shows it (queries/events/event-schema.ts), the shape the read side
 * answers and the write side stores (payments' and webhooks' rendered documents): the
 * envelope in camelCase, the block time also as ISO 8601, `data` as the codec decoded it.
 */
import type { EventData } from '../events/codec.js';

export interface ApiEvent {
  id: string;
  name: string;
  signature: string;
  slot: number;
  blockTime: number | null;
  timestamp: string | null;
  ixPath: string;
  index: number;
  data: EventData;
}

/** An archived event as Postgres returns it (int8 as strings). */
export interface ArchivedEventRow {
  id: string; name: string; signature: string; slot: string; block_time: string | null;
  ix_path: string; event_index: number; data: EventData;
}

export function toApiEvent(r: ArchivedEventRow): ApiEvent {
  const blockTime = r.block_time === null ? null : Number(r.block_time);
  return {
    id: r.id,
    name: r.name,
    signature: r.signature,
    slot: Number(r.slot),
    blockTime,
    timestamp: blockTime === null ? null : new Date(blockTime * 1000).toISOString(),
    ixPath: r.ix_path,
    index: r.event_index,
    data: r.data,
  };
}
