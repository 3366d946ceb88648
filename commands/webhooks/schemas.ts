/** One schema per request part and response of /v1/webhooks (validation and OpenAPI). */
import { base58Key, limitSchema, offsetSchema, type JsonSchema } from '../../src/kernel/http/schema.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST } from './delivery/event-types.js';

export const DEFAULT_LIMIT = 100;

export const webhookSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'gateway_pubkey', 'endpoint_url', 'active'],
  properties: {
    id: { type: 'integer', description: 'assigned by the service' },
    gateway_pubkey: { type: 'string', minLength: 32, maxLength: 44, description: 'gateway authority public key (the gateway account is accepted too)' },
    endpoint_url: { type: 'string', format: 'uri', description: 'target URL; HTTPS or HTTP' },
    active: { type: 'boolean', description: 'whether deliveries happen' },
    event_types: { type: 'array', nullable: true, items: { type: 'string' }, description: 'the event types delivered; null = all of them' },
    ordered: { type: 'boolean', description: 'one delivery at a time, in stream order (a failing event holds the ones after it)' },
    rate_limit_per_second: { type: 'integer', nullable: true, description: 'the most attempts per second to this endpoint, across workers; null = no limit' },
    disabled_reason: { type: 'string', nullable: true, description: 'why the service disabled the webhook (410 Gone, or failing for 5 days); null otherwise' },
    previous_secret_expires_at: { type: 'string', format: 'date-time', nullable: true, description: 'after a secret rotation: until when the previous secret also signs' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export const createdWebhookSchema: JsonSchema = {
  ...webhookSchema,
  required: [...(webhookSchema['required'] as string[]), 'secret'],
  properties: {
    ...(webhookSchema['properties'] as Record<string, JsonSchema>),
    secret: {
      type: 'string', pattern: '^whsec_',
      description: 'Standard Webhooks signing secret (whsec_ + base64). Returned once, on creation only: store it to verify deliveries.',
    },
  },
};


/** An endpoint's delivery settings, shared by create and update. */
const SUBSCRIBABLE = WEBHOOK_EVENT_TYPES.filter((t) => t !== WEBHOOK_TEST);
const settingsProperties: Record<string, JsonSchema> = {
  event_types: {
    type: 'array', minItems: 1, maxItems: SUBSCRIBABLE.length, uniqueItems: true, items: { type: 'string', enum: [...SUBSCRIBABLE] },
    nullable: true, description: 'event types to deliver (GET /v1/webhooks/event-types); omitted on create or null = all',
  },
  ordered: { type: 'boolean', description: 'deliver one event at a time in stream order; a failing event holds the ones after it until it is delivered or dead (default false: concurrent)' },
  rate_limit_per_second: { type: 'integer', minimum: 1, maximum: 1000, nullable: true, description: 'the most attempts per second, across every worker; null = no limit' },
};

export const webhookListSchema: JsonSchema = { type: 'array', items: webhookSchema };

export const createBodySchema: JsonSchema = {
  type: 'object',
  required: ['gateway_pubkey', 'endpoint_url'],
  additionalProperties: false,
  properties: {
    gateway_pubkey: { ...base58Key, description: 'gateway authority public key (base58, 32 bytes); the gateway account address is accepted too' },
    endpoint_url: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description: 'http(s) URL that receives the deliveries; must resolve to a public address' },
    active: { type: 'boolean', default: true },
    ...settingsProperties,
  },
};

export const updateBodySchema: JsonSchema = {
  type: 'object',
  required: ['active'],
  additionalProperties: false,
  properties: {
    active: { type: 'boolean', description: 'false stops deliveries; true resumes them (and clears disabled_reason)' },
    ...settingsProperties,
  },
};

export const idParams: JsonSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'webhook id' } },
};

export const gatewayParams: JsonSchema = {
  type: 'object',
  required: ['gatewayPubkey'],
  properties: { gatewayPubkey: { ...base58Key, description: 'the gateway_pubkey the webhooks were registered under' } },
};

export const listQuery = (maxLimit: number, withActiveOnly = true): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    ...(withActiveOnly ? { active_only: { type: 'boolean', default: false, description: 'true returns only active webhooks' } } : {}),
    limit: { ...limitSchema(DEFAULT_LIMIT, maxLimit), description: `page size (default ${DEFAULT_LIMIT}, at most ${maxLimit})` },
    offset: { ...offsetSchema, description: 'rows skipped (default 0)' },
  },
});

export const deletedSchema: JsonSchema = {
  type: 'object',
  required: ['deleted'],
  properties: { deleted: { type: 'integer', minimum: 0, description: 'number of webhooks removed' } },
};

export const attemptSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'deliveryId', 'eventId', 'eventType', 'attempt', 'attemptedAt', 'success', 'statusCode', 'latencyMs', 'error', 'deliveryStatus'],
  properties: {
    id: { type: 'string', description: 'attempt id' },
    deliveryId: { type: 'string', description: 'the delivery (one per event and webhook) this attempt belongs to' },
    eventId: { type: 'string', description: 'the event identity, sent as webhook-id' },
    eventType: { type: 'string', description: 'the event name, sent as the body\'s type' },
    attempt: { type: 'integer', description: '1 for the first attempt of the delivery' },
    attemptedAt: { type: 'string', format: 'date-time' },
    success: { type: 'boolean', description: 'a 2xx answer' },
    statusCode: { type: 'integer', nullable: true, description: 'HTTP status, null when no answer came' },
    latencyMs: { type: 'integer' },
    error: { type: 'string', nullable: true, description: 'why the attempt failed: timeout, refused target, network error or HTTP status' },
    deliveryStatus: { type: 'string', enum: ['pending', 'delivered', 'dead'], description: 'the delivery\'s state now' },
    nextAttemptAt: { type: 'string', format: 'date-time', nullable: true, description: 'when a pending delivery is tried next' },
  },
};

export const attemptListSchema: JsonSchema = { type: 'array', items: attemptSchema };

export const eventTypeListSchema: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['name', 'family', 'description', 'example'],
    properties: {
      name: { type: 'string' },
      family: { type: 'string', enum: ['chain', 'lifecycle', 'notice'] },
      description: { type: 'string' },
      example: { type: 'object', description: 'a delivery body of this type: {id, type, createdAt, data}' },
    },
  },
};

export const rotatedSecretSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'secret', 'previous_secret_expires_at'],
  properties: {
    id: { type: 'integer' },
    secret: { type: 'string', pattern: '^whsec_', description: 'the new signing secret, shown this once' },
    previous_secret_expires_at: { type: 'string', format: 'date-time', description: 'until then every delivery carries both signatures' },
  },
};
