/**
 * The event envelope: one decoded Anchor event is one stream entry and one archive row.
 * Its identity is derived from the chain and stable across re-reads of a transaction:
 * `<signature>:<instruction path>:<index of the event in the transaction>`.
 */
import { isEventName, type EventName } from './catalog.js';
import { checkEventData } from './shape.js';
import type { EventDataMap } from './event-types.js';

/** What every event carries besides its name and data. */
export interface EventEnvelope {
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
}

/**
 * One program event: a discriminated union on `name`, so a `switch (e.name)` narrows
 * `data` to that event's generated type (event-types.ts). `TributaryEvent<'PaymentRecord'>`
 * is one member.
 */
export type TributaryEvent<N extends EventName = EventName> = { [K in N]: EventEnvelope & { name: K; data: EventDataMap[K] } }[N];

/** Name and data without the envelope, as the decoder produces them. */
export type DecodedEvent<N extends EventName = EventName> = { [K in N]: { name: K; data: EventDataMap[K] } }[N];

/** The exhaustiveness check that ends every fold over events: a new event name fails to compile here. */
export function assertNever(x: never): never {
  throw new Error(`unhandled event ${JSON.stringify((x as { name?: unknown }).name ?? x)}`);
}

export function eventId(signature: string, ixPath: string, index: number): string {
  return `${signature}:${ixPath}:${index}`;
}

/** The single field under which an event travels in a stream entry. */
export const STREAM_FIELD = 'e';

export function serializeEvent(e: TributaryEvent): string {
  return JSON.stringify(e);
}

/** An event as its stream entry's text (serializeEvent's), with its identity. */
export interface SerializedEvent { id: string; payload: string }

/** Parses a stream entry into a typed event; throws on a malformed entry or one whose data does not match the IDL. */
export function parseEvent(raw: string): TributaryEvent {
  const e = JSON.parse(raw) as { id?: unknown; name?: unknown; data?: unknown };
  if (typeof e.id !== 'string' || typeof e.name !== 'string' || typeof e.data !== 'object' || e.data === null) {
    throw new Error('malformed event entry');
  }
  if (!isEventName(e.name)) throw new Error(`unknown event ${e.name}`);
  checkEventData(e.name, e.data as Record<string, unknown>);
  return e as unknown as TributaryEvent;
}
