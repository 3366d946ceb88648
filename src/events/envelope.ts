/**
 * The event envelope: one decoded Anchor event is one stream entry and one archive row.
 * Its identity is derived from the chain and stable across re-reads of a transaction:
 * `<signature>:<instruction path>:<index of the event in the transaction>`.
 */
import type { EventName } from './catalog.js';
import type { EventData } from './codec.js';

export interface TributaryEvent {
  /** stable identity; every consumer deduplicates on it */
  id: string;
  name: EventName;
  signature: string;
  slot: number;
  /** unix seconds, or null when the cluster did not report one */
  blockTime: number | null;
  /** instruction path: "3" for top-level instruction 3, "3.1" for its inner instruction 1 */
  ixPath: string;
  /** index of the event among all events of the transaction, in log order */
  index: number;
  data: EventData;
}

export function eventId(signature: string, ixPath: string, index: number): string {
  return `${signature}:${ixPath}:${index}`;
}

/** The single field under which an event travels in a stream entry. */
export const STREAM_FIELD = 'e';

export function serializeEvent(e: TributaryEvent): string {
  return JSON.stringify(e);
}

export function parseEvent(raw: string): TributaryEvent {
  const e = JSON.parse(raw) as TributaryEvent;
  if (typeof e.id !== 'string' || typeof e.name !== 'string' || typeof e.data !== 'object' || e.data === null) {
    throw new Error('malformed event entry');
  }
  return e;
}
