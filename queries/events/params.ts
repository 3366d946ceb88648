/**
 * Parsing of the events API's inputs that a JSON schema cannot express: times given as
 * ISO 8601 or unix seconds, tracking ids turned into their memo encodings, event names
 * with SPEC's aliases. Pure functions; bad input throws the typed `invalid` error (400).
 */
import { EVENT_ALIASES, EVENT_NAMES, resolveEventName, type EventName } from '../../src/kernel/events/catalog.js';
import { textToFixedBytes } from '../../src/kernel/events/codec.js';
import { invalid } from '../../src/kernel/http/errors.js';

/** 9999-12-31T23:59:59Z: a larger "unix seconds" value is almost surely milliseconds. */
const MAX_UNIX_SECONDS = 253_402_300_799;
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * A time as unix seconds (fractional when the ISO form has fractions). ISO 8601 without
 * an offset is read as UTC: the server's own zone would make answers depend on the node.
 */
export function parseTime(input: string, param: string): number {
  const text = input.trim();
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n > MAX_UNIX_SECONDS) throw invalid(`${param} is out of range for unix seconds (milliseconds are not accepted)`);
    return n;
  }
  const m = ISO_8601.exec(text);
  if (!m) throw invalid(`${param} must be ISO 8601 (e.g. 2024-05-01T12:00:00Z) or unix seconds`);
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}${frac.slice(0, 4)}${offset}`;
  const ms = Date.parse(iso);
  // Date.parse rolls 2024-02-31 over to March; a round trip through the fields catches it
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  const valid = Number.isFinite(ms) && day.getUTCMonth() === Number(mo) - 1 && day.getUTCDate() === Number(d)
    && Number(h) < 24 && Number(mi) < 60 && Number(s) < 60;
  if (!valid) throw invalid(`${param} is not a valid date and time`);
  return ms / 1000;
}

export interface TimeRange {
  /** inclusive lower bound in whole block-time seconds */
  from?: number;
  /** inclusive upper bound in whole block-time seconds */
  to?: number;
}

/**
 * startTime/endTime (either may be absent) as an inclusive range of whole seconds, each
 * checked on its own; the range may be reversed (checkTimeOrder checks that).
 */
export function parseTimes(startTime: string | undefined, endTime: string | undefined): TimeRange {
  const range: TimeRange = {};
  if (startTime !== undefined) range.from = Math.ceil(parseTime(startTime, 'startTime'));
  if (endTime !== undefined) range.to = Math.floor(parseTime(endTime, 'endTime'));
  return range;
}

export function checkTimeOrder(range: TimeRange): TimeRange {
  if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
    throw invalid('startTime is after endTime');
  }
  return range;
}

/** startTime/endTime as an inclusive range of whole seconds; 400 when reversed. */
export function parseTimeRange(startTime: string | undefined, endTime: string | undefined): TimeRange {
  return checkTimeOrder(parseTimes(startTime, endTime));
}

export function hasTimeRange(r: TimeRange): boolean {
  return r.from !== undefined || r.to !== undefined;
}

/**
 * The memo encodings a tracking id can have on chain: 64 bytes zero-padded (payment
 * policies and records) and, when it fits, 32 bytes (composable policies).
 */
export function trackingIdMemos(trackingId: string): Buffer[] {
  if (trackingId.length === 0) throw invalid('trackingId must not be empty');
  const long = textToFixedBytes(trackingId, 64);
  if (!long) throw invalid('trackingId is longer than the 64-byte memo');
  const short = textToFixedBytes(trackingId, 32);
  return short ? [long, short] : [long];
}

/** Canonical name of a name or alias; 400 when unknown (the schema's enum normally catches it first). */
export function eventNameParam(input: string): EventName {
  const name = resolveEventName(input);
  if (!name) throw invalid(`unknown event name '${input}'`);
  return name;
}

/** Every accepted spelling of an event name: the 19 canonical names, then SPEC's aliases. */
export const EVENT_NAME_INPUTS: readonly string[] = [...EVENT_NAMES, ...Object.keys(EVENT_ALIASES)];

export function checkSlotRange(minSlot: number | undefined, maxSlot: number | undefined): void {
  if (minSlot !== undefined && maxSlot !== undefined && minSlot > maxSlot) throw invalid('minSlot is greater than maxSlot');
}
