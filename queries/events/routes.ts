/**
 * The events API (SPEC "Events"): GET /v1/events with its filter modes, counts, names,
 * payment stats, the per-kind lists and /typed/{eventName}. These endpoints answer bare
 * arrays and objects, as SPEC says; errors use the error envelope.
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import { EVENT_NAMES, type EventName } from '../../src/kernel/events/catalog.js';
import { notFound } from '../../src/kernel/http/errors.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key, limitSchema, offsetSchema, signatureSchema, type JsonSchema } from '../../src/kernel/http/schema.js';
import { anyTypedEventListSchema, apiEventListSchema, apiEventSchema } from './event-schema.js';
import { countEvents, distinctNames, findBySignature, listEventsJson, type EventWhere } from './events-query.js';
import { registerKindRoutes } from './kind-routes.js';
import {
  checkSlotRange, checkTimeOrder, EVENT_NAME_INPUTS, eventNameParam, hasTimeRange, parseTimeRange, parseTimes, trackingIdMemos, type TimeRange,
} from './params.js';
import { paymentStats } from './payment-stats-query.js';
import { readScope } from '../../src/kernel/names/read-scopes.js';

const TIME_HELP = 'ISO 8601 (e.g. 2024-05-01T12:00:00Z; without an offset, UTC) or unix seconds; compared with the block time, inclusive';
const timeParam: JsonSchema = { type: 'string', minLength: 1, maxLength: 40, description: TIME_HELP };
const slotParam = (d: string): JsonSchema => ({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: d });
const eventNameSchema: JsonSchema = {
  type: 'string', enum: [...EVENT_NAME_INPUTS], description: 'canonical IDL name, or one of SPEC\'s short aliases (PolicyCreated, GatewayCreated, …)',
};
const stringArray: JsonSchema = { type: 'array', items: { type: 'string' } };

interface EventsQuery {
  signature?: string; slot?: number; trackingId?: string; eventName?: string;
  startTime?: string; endTime?: string; minSlot?: number; maxSlot?: number; limit: number; offset: number;
}

/**
 * The archive's keys a list depends on (read cache): a trackingId's lists hold only
 * events of its two memo encodings, a name's only events of that name (filterMode's
 * order). Other modes depend on any new event.
 */
function eventsScopes(q: EventsQuery): string[] | undefined {
  if (q.signature !== undefined || q.slot !== undefined) return undefined;
  if (q.trackingId !== undefined) return trackingIdMemos(q.trackingId).map(readScope.memo);
  if (q.eventName !== undefined) return [readScope.name(eventNameParam(q.eventName))];
  return undefined;
}

/** The one list mode that applies, after signature: slot, trackingId, eventName, time, generic. */
function filterMode(q: EventsQuery, memos: Buffer[] | undefined, name: EventName | undefined, range: TimeRange): EventWhere {
  if (q.slot !== undefined) return { slot: q.slot };
  if (memos) return { memos };
  if (name) return { name };
  if (hasTimeRange(range)) return { time: checkTimeOrder(range) };
  checkSlotRange(q.minSlot, q.maxSlot);
  return { ...(q.minSlot !== undefined ? { minSlot: q.minSlot } : {}), ...(q.maxSlot !== undefined ? { maxSlot: q.maxSlot } : {}) };
}

interface EventRouteDeps { dbRead: Db; config: Pick<Config, 'http'> }
type Page = { limit: JsonSchema; offset: JsonSchema };

export function registerEventRoutes(api: Api, ctx: EventRouteDeps): void {
  const page: Page = { limit: limitSchema(100, ctx.config.http.maxLimit), offset: offsetSchema };

  registerEventSearch(api, ctx, page);
  registerEventAggregates(api, ctx);

  // before the per-kind lists only for readability: no path below overlaps another
  registerKindRoutes(api, ctx);

  api.route<{ limit: number; offset: number }, { eventName: string }>({
    method: 'get',
    path: '/v1/events/typed/:eventName',
    summary: 'Events of one kind, fully typed',
    description: 'Events of the kind named in the path (a name from /v1/events/names/tributary, or an alias), newest first; data follows the kind\'s schema.',
    tags: ['events'],
    params: { type: 'object', required: ['eventName'], properties: { eventName: eventNameSchema } },
    query: { type: 'object', additionalProperties: false, properties: page },
    responses: { 200: { description: 'typed events', schema: anyTypedEventListSchema } },
    cachedFrom: ['archive'],
    cacheScopes: (_q, p) => [readScope.name(eventNameParam(p.eventName))],
    async handler({ query, params }) {
      const name = eventNameParam(params.eventName);
      return { json: await listEventsJson(ctx.dbRead, { name }, { limit: query.limit, offset: query.offset }) };
    },
  });
}

/** GET /v1/events: one filter mode, by SPEC's priority. */
function registerEventSearch(api: Api, ctx: EventRouteDeps, page: Page): void {
  api.route<EventsQuery>({
    method: 'get',
    path: '/v1/events',
    summary: 'Search archived events',
    description: 'Exactly one filter mode applies, in this priority order: signature (one event object, the first of the transaction; 404 when none), slot, trackingId (matched through its memo encodings: 64 bytes zero-padded, and 32 bytes as on composable policies), eventName, startTime/endTime; with none of them, a generic search bounded by minSlot/maxSlot. Parameters of the modes that do not apply are ignored, except that each one malformed in itself (not a time, not a slot, an unknown name, a tracking id past 64 bytes) is still a 400; a reversed startTime/endTime or minSlot/maxSlot is a 400 only when its mode applies. Lists are newest first (slot, then arrival), bare arrays.',
    tags: ['events'],
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        signature: signatureSchema,
        slot: slotParam('events of this slot'),
        trackingId: { type: 'string', minLength: 1, maxLength: 64, description: 'tracking id (a memo of at most 64 UTF-8 bytes)' },
        eventName: eventNameSchema,
        startTime: timeParam,
        endTime: timeParam,
        minSlot: slotParam('generic search: lowest slot'),
        maxSlot: slotParam('generic search: highest slot'),
        ...page,
      },
    },
    responses: {
      200: { description: 'an event (signature mode) or a list of events', schema: { oneOf: [apiEventSchema, apiEventListSchema] } },
      404: { description: 'no event with this signature' },
    },
    cachedFrom: ['archive'],
    cacheScopes: (q) => eventsScopes(q),
    async handler({ query: q }) {
      // Each parameter malformed in itself is a 400, whichever mode applies. Checks between
      // parameters (a reversed time or slot range) belong to their mode: SPEC applies
      // exactly one mode, so those of a lower-priority mode are ignored, not validated.
      const range = parseTimes(q.startTime, q.endTime);
      const memos = q.trackingId !== undefined ? trackingIdMemos(q.trackingId) : undefined;
      const name = q.eventName !== undefined ? eventNameParam(q.eventName) : undefined;
      if (q.signature !== undefined) {
        const event = await findBySignature(ctx.dbRead, q.signature);
        if (!event) throw notFound(`no event with signature ${q.signature}`);
        return { body: event };
      }
      return { json: await listEventsJson(ctx.dbRead, filterMode(q, memos, name, range), { limit: q.limit, offset: q.offset }) };
    },
  });
}

/** Counts, names and payment stats over the archive. */
function registerEventAggregates(api: Api, ctx: EventRouteDeps): void {
  api.route<{ eventName?: string; startTime?: string; endTime?: string }>({
    method: 'get',
    path: '/v1/events/count',
    summary: 'Count archived events',
    description: 'Number of events matching all the filters given (AND).',
    tags: ['events'],
    query: { type: 'object', additionalProperties: false, properties: { eventName: eventNameSchema, startTime: timeParam, endTime: timeParam } },
    responses: { 200: { description: 'count', schema: { type: 'object', required: ['count'], properties: { count: { type: 'integer', minimum: 0 } } } } },
    cachedFrom: ['archive'],
    async handler({ query: q }) {
      const range = parseTimeRange(q.startTime, q.endTime);
      const where: EventWhere = { time: range, ...(q.eventName !== undefined ? { name: eventNameParam(q.eventName) } : {}) };
      return { body: { count: await countEvents(ctx.dbRead, where) } };
    },
  });

  api.route({
    method: 'get',
    path: '/v1/events/names',
    summary: 'Event names present in the archive',
    tags: ['events'],
    query: { type: 'object', additionalProperties: false, properties: {} },
    responses: { 200: { description: 'distinct names, alphabetical', schema: stringArray } },
    cachedFrom: ['archive'],
    async handler() {
      return { body: await distinctNames(ctx.dbRead) };
    },
  });

  api.route({
    method: 'get',
    path: '/v1/events/names/tributary',
    summary: 'Canonical event names of the on-chain program',
    tags: ['events'],
    query: { type: 'object', additionalProperties: false, properties: {} },
    responses: { 200: { description: 'the IDL\'s 19 event names', schema: { ...stringArray, items: { type: 'string', enum: [...EVENT_NAMES] } } } },
    handler() {
      return Promise.resolve({ body: [...EVENT_NAMES] });
    },
  });

  api.route<{ gateway?: string; startTime?: string; endTime?: string }>({
    method: 'get',
    path: '/v1/events/payments/stats',
    summary: 'Payment count and volume',
    description: 'Over PaymentRecord events matching all the filters given. volume is the exact sum of amounts in base units (decimal string).',
    tags: ['events'],
    query: { type: 'object', additionalProperties: false, properties: { gateway: base58Key, startTime: timeParam, endTime: timeParam } },
    responses: {
      200: {
        description: 'aggregates',
        schema: { type: 'object', required: ['count', 'volume'], properties: { count: { type: 'integer', minimum: 0 }, volume: { type: 'string', pattern: '^[0-9]+$' } } },
      },
    },
    cachedFrom: ['payment-stats', 'payments'],
    cacheScopes: (q) => (q.gateway !== undefined ? [readScope.gateway(q.gateway)] : undefined),
    async handler({ query: q }) {
      const time = parseTimeRange(q.startTime, q.endTime);
      return { body: await paymentStats(ctx.dbRead, { time, ...(q.gateway !== undefined ? { gateway: q.gateway } : {}) }) };
    },
  });
}
