/**
 * /v1/webhooks routes beyond SPEC's seven: the event type catalog, secret
 * rotation, resend, recover and test. Registered by routes.ts (one route module).
 */
import type { RequestHandler, Response } from 'express';
import type { Api } from '../../infra/http/routes.js';
import type { RequestAuth } from '../../src/kernel/auth/gateway-token.js';
import { EVENT_TYPE_CATALOG } from './delivery/event-types.js';
import { eventTypeListSchema, idParams, rotatedSecretSchema } from './schemas.js';
import { recoverDeliveries, resendDelivery, rotateSecret, sendTest, type ToolDeps } from './tools.js';
import type { JsonSchema } from '../../src/kernel/http/schema.js';

type IdParams = { id: number };
type DeliveryParams = { id: number; deliveryId: string };

const authOf = (res: Response): RequestAuth => res.locals['auth'] as RequestAuth;
const SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }, { AdminApiKey: [] }];
const ERRORS = {
  400: { description: 'bad id or body' },
  401: { description: 'no credential, or an invalid or expired one' },
  403: { description: 'the token was issued for another gateway' },
  404: { description: 'unknown webhook' },
};

const deliveryParams: JsonSchema = {
  type: 'object',
  required: ['id', 'deliveryId'],
  properties: {
    ...(idParams['properties'] as Record<string, JsonSchema>),
    deliveryId: { type: 'string', pattern: '^[1-9][0-9]{0,17}$', description: 'a delivery id (deliveryId of GET /v1/webhooks/{id}/deliveries)' },
  },
};
const recoverBody: JsonSchema = {
  type: 'object', required: ['since'], additionalProperties: false,
  properties: { since: { type: 'string', format: 'date-time', description: 'deliveries created at or after this time (ISO 8601 with a zone)' } },
};
const resendSchema: JsonSchema = {
  type: 'object', required: ['deliveryId', 'status'],
  properties: { deliveryId: { type: 'string' }, status: { type: 'string', enum: ['pending'] } },
};
const recoveredSchema: JsonSchema = { type: 'object', required: ['recovered'], properties: { recovered: { type: 'integer', minimum: 0, description: 'deliveries queued again' } } };
const testSchema: JsonSchema = {
  type: 'object',
  required: ['deliveryId', 'eventId', 'outcome', 'success', 'statusCode', 'latencyMs', 'error'],
  properties: {
    deliveryId: { type: 'string' }, eventId: { type: 'string', description: 'sent as webhook-id' },
    outcome: {
      type: 'string', enum: ['delivered', 'refused', 'unreachable'],
      description: 'delivered: the endpoint answered 2xx; refused: it answered another status (statusCode); unreachable: no HTTP answer, whatever the network error (no code and no latency are told)',
    },
    success: { type: 'boolean', description: 'the endpoint answered 2xx' },
    statusCode: { type: 'integer', nullable: true, description: 'the endpoint\'s status; null when unreachable' },
    latencyMs: { type: 'integer', nullable: true, description: 'until the answer, whole milliseconds; null when unreachable' },
    error: { type: 'string', nullable: true, description: 'null when delivered, HTTP <status> when refused, one fixed sentence when unreachable' },
  },
};

export function registerWebhookToolRoutes(api: Api, deps: ToolDeps, gatewayOrAdmin: RequestHandler): void {
  api.route({
    method: 'get',
    path: '/v1/webhooks/event-types',
    summary: 'The event types a webhook can receive',
    description: 'Every type an endpoint may list in event_types (and webhook.test), with a description and an example delivery body each.',
    tags: ['webhooks'],
    responses: { 200: { description: 'event types', schema: eventTypeListSchema } },
    handler() {
      return Promise.resolve({ body: EVENT_TYPE_CATALOG, headers: { 'Cache-Control': 'public, max-age=3600' } });
    },
  });

  api.route<Record<string, never>, IdParams>({
    method: 'post',
    path: '/v1/webhooks/:id/secret/rotate',
    summary: 'Rotate the signing secret',
    description: 'Answers the new secret, this once. Until previous_secret_expires_at (WEBHOOK_SECRET_GRACE_SECONDS, default 24 h) every delivery carries two signatures in webhook-signature, the new secret\'s then the old one\'s, space-separated: receivers can switch secrets without missing a delivery.',
    tags: ['webhooks'],
    security: SECURITY,
    before: [gatewayOrAdmin],
    params: idParams,
    responses: { 200: { description: 'the new secret', schema: rotatedSecretSchema }, ...ERRORS },
    async handler({ params, res }) {
      return { body: await rotateSecret(deps, authOf(res), params.id) };
    },
  });

  api.route<Record<string, never>, DeliveryParams>({
    method: 'post',
    path: '/v1/webhooks/:id/deliveries/:deliveryId/resend',
    summary: 'Send one delivery again',
    description: 'The delivery (delivered, dead or waiting for a retry) is queued now with its full retry schedule; it is sent while the webhook is active.',
    tags: ['webhooks'],
    security: SECURITY,
    before: [gatewayOrAdmin],
    params: deliveryParams,
    responses: { 202: { description: 'queued', schema: resendSchema }, ...ERRORS, 404: { description: 'unknown webhook or delivery' }, 409: { description: 'the delivery is being attempted right now' } },
    async handler({ params, res }) {
      return { status: 202, body: await resendDelivery(deps, authOf(res), params.id, params.deliveryId) };
    },
  });

  api.route<Record<string, never>, IdParams, { since: string }>({
    method: 'post',
    path: '/v1/webhooks/:id/recover',
    summary: 'Send again every failed delivery since a time',
    description: 'Every delivery created since `since` that is dead, or waiting for a retry after a failed attempt, is queued now with its full retry schedule.',
    tags: ['webhooks'],
    security: SECURITY,
    before: [gatewayOrAdmin],
    params: idParams,
    body: recoverBody,
    responses: { 202: { description: 'queued', schema: recoveredSchema }, ...ERRORS },
    async handler({ params, body, res }) {
      return { status: 202, body: await recoverDeliveries(deps, authOf(res), params.id, new Date(body.since)) };
    },
  });

  api.route<Record<string, never>, IdParams>({
    method: 'post',
    path: '/v1/webhooks/:id/test',
    summary: 'Send a test event',
    description: 'POSTs a signed webhook.test event to the endpoint now (whatever its event_types, active or not) and answers the attempt\'s outcome: '
      + 'delivered, refused (with the endpoint\'s status) or unreachable (one answer for every network error); it is recorded with the deliveries and not retried. '
      + 'Rate limit: RATE_LIMIT_WEBHOOK_TEST_PER_MINUTE tests per minute per gateway (default 10), then 429 with Retry-After.',
    tags: ['webhooks'],
    security: SECURITY,
    before: [gatewayOrAdmin],
    params: idParams,
    responses: { 200: { description: 'the attempt', schema: testSchema }, ...ERRORS, 429: { description: 'the gateway sent RATE_LIMIT_WEBHOOK_TEST_PER_MINUTE tests in the last minute' } },
    async handler({ params, res }) {
      return { body: await sendTest(deps, authOf(res), params.id) };
    },
  });
}
