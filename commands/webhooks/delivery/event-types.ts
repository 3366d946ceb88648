/**
 * The catalog of webhook event types: every `type` a delivery body can carry, with a
 * description and an example body. Three families:
 *
 * - the chain's events, by their canonical IDL names (src/kernel/events/catalog.ts); their data
 *   is the event as GET /v1/events returns it;
 * - the service's lifecycle events (payment.upcoming, payment.failed, subscription.*),
 *   written into the outbox by the scheduler; their data is the scheduler's own object;
 * - notices about the webhooks themselves (webhook.disabled, webhook.test).
 *
 * Endpoints subscribe with `event_types` (validated against this list); the outbox's
 * trigger drops what an endpoint did not ask for, whoever writes the row.
 */
import { EVENT_NAMES, type EventName } from '../../../src/kernel/events/catalog.js';
import { idlType, type IdlTypeRef } from '../../../src/kernel/idl/index.js';

export const LIFECYCLE_EVENT_TYPES = [
  'payment.upcoming',
  'payment.failed',
  'subscription.past_due',
  'subscription.recovered',
  'subscription.canceled',
  'checkout.session.completed',
  'checkout.session.expired',
] as const;
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];

export const WEBHOOK_DISABLED = 'webhook.disabled';
export const WEBHOOK_TEST = 'webhook.test';
export const NOTICE_EVENT_TYPES = [WEBHOOK_DISABLED, WEBHOOK_TEST] as const;

export type WebhookEventType = EventName | LifecycleEventType | (typeof NOTICE_EVENT_TYPES)[number];

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [...EVENT_NAMES, ...LIFECYCLE_EVENT_TYPES, ...NOTICE_EVENT_TYPES];

/** The delivery body: what every POST carries (commands/webhooks/delivery/deliver.ts writes it). */
export interface DeliveryBody { id: string; type: string; createdAt: string; data: unknown }

export interface EventTypeInfo { name: WebhookEventType; family: 'chain' | 'lifecycle' | 'notice'; description: string; example: DeliveryBody }

const EXAMPLE_KEY = 'GatewayAuthority1111111111111111111111111111';
const EXAMPLE_TIME = '2026-01-01T00:00:00.000Z';

const CHAIN_DESCRIPTIONS: Partial<Record<EventName, string>> = {
  PaymentRecord: 'a payment executed under one of the gateway\'s policies',
  PaymentPolicyCreated: 'a subscriber created a payment policy with the gateway',
  PaymentPolicyStatusChanged: 'a payment policy was paused or resumed',
  PaymentPolicyDeleted: 'a payment policy was deleted',
  ComposablePolicyCreated: 'a composable policy was created with the gateway',
  ComposablePolicyStatusChanged: 'a composable policy was paused or resumed',
  ComposablePolicyDeleted: 'a composable policy was deleted',
  ComposableExecuted: 'a composable policy executed',
  PaymentGatewayCreated: 'the gateway was created',
  PaymentGatewayDeleted: 'the gateway was deleted',
  GatewayFeeBpsChanged: 'the gateway\'s fee changed',
  GatewayFeeRecipientChanged: 'the gateway\'s fee recipient changed',
  GatewaySignerChanged: 'the gateway\'s signer changed',
  ReferralRewardDistributedRecord: 'a referral reward was paid out of a gateway payment',
};

const LIFECYCLE: Record<LifecycleEventType, { description: string; data: Record<string, unknown> }> = {
  'payment.upcoming': {
    description: 'a scheduled subscription payment falls due soon',
    data: { policy: EXAMPLE_KEY, gateway: EXAMPLE_KEY, amount: '1000000', dueAt: EXAMPLE_TIME },
  },
  'payment.failed': {
    description: 'a scheduled payment could not be executed (its error says why)',
    data: { policy: EXAMPLE_KEY, gateway: EXAMPLE_KEY, amount: '1000000', error: 'InsufficientFunds', attempt: 1 },
  },
  'subscription.past_due': {
    description: 'a subscription missed its payment and is past due',
    data: { policy: EXAMPLE_KEY, gateway: EXAMPLE_KEY, dueAt: EXAMPLE_TIME },
  },
  'subscription.recovered': {
    description: 'a past-due subscription was paid and is current again',
    data: { policy: EXAMPLE_KEY, gateway: EXAMPLE_KEY, paidAt: EXAMPLE_TIME },
  },
  'subscription.canceled': {
    description: 'a subscription was canceled (by its subscriber, or after failing too long)',
    data: { policy: EXAMPLE_KEY, gateway: EXAMPLE_KEY, canceledAt: EXAMPLE_TIME, reason: 'past_due' },
  },
  'checkout.session.completed': {
    description: 'a hosted checkout session was paid: its policy is on chain (docs/checkout.md)',
    data: { sessionId: 'cs_Ab3dEf6hIj9kLm2nOp5qRs8t', trackingId: 'order-1', gateway: EXAMPLE_KEY, payer: EXAMPLE_KEY, policy: EXAMPLE_KEY, transaction: '5hVJk3…', amount: '1000000', tokenMint: EXAMPLE_KEY },
  },
  'checkout.session.expired': {
    description: 'a hosted checkout session expired unpaid',
    data: { sessionId: 'cs_Ab3dEf6hIj9kLm2nOp5qRs8t', trackingId: 'order-1', gateway: EXAMPLE_KEY, expiresAt: EXAMPLE_TIME },
  },
};

/** A plausible value of an IDL type, in the API's JSON form (u64 as decimal strings, keys base58). */
function exampleValue(t: IdlTypeRef, field: string): unknown {
  if (typeof t === 'string') {
    if (t === 'pubkey') return EXAMPLE_KEY;
    if (t === 'bool') return true;
    if (t === 'string') return 'example';
    if (/^[ui](64|128)$/.test(t)) return field === 'timestamp' ? '1767225600' : '1000000';
    if (/^[ui](8|16|32)$/.test(t)) return 1;
    return null;
  }
  if ('array' in t) return t.array[0] === 'u8' ? (field === 'memo' ? 'trk-1' : '') : [];
  if ('option' in t) return null;
  if ('vec' in t) return [];
  const def = idlType(t.defined.name);
  if (def.type.kind === 'enum') return def.type.variants[0]?.name ?? null;
  return Object.fromEntries((def.type.fields ?? []).map((f) => [f.name, exampleValue(f.type, f.name)]));
}

function chainExample(name: EventName): DeliveryBody {
  const def = idlType(name);
  const fields = def.type.kind === 'struct' ? def.type.fields ?? [] : [];
  const id = `5hVJk3…:0.0:0`;
  return {
    id,
    type: name,
    createdAt: EXAMPLE_TIME,
    data: {
      id, name, signature: '5hVJk3…', slot: 123456, blockTime: 1767225600, timestamp: EXAMPLE_TIME, ixPath: '0', index: 0,
      data: Object.fromEntries(fields.map((f) => [f.name, exampleValue(f.type, f.name)])),
    },
  };
}

function build(): EventTypeInfo[] {
  const chain = EVENT_NAMES.map((name): EventTypeInfo => ({
    name,
    family: 'chain',
    description: CHAIN_DESCRIPTIONS[name] ?? 'a program event that concerns no single gateway: never delivered by webhooks, listed for completeness',
    example: chainExample(name),
  }));
  const lifecycle = LIFECYCLE_EVENT_TYPES.map((name): EventTypeInfo => ({
    name,
    family: 'lifecycle',
    description: LIFECYCLE[name].description,
    example: { id: `${name}:example`, type: name, createdAt: EXAMPLE_TIME, data: LIFECYCLE[name].data },
  }));
  const notices: EventTypeInfo[] = [
    {
      name: WEBHOOK_DISABLED,
      family: 'notice',
      description: 'another webhook of the gateway was disabled (it answered 410 Gone, or failed for 5 days)',
      example: { id: 'webhook.disabled:7:1767225600000', type: WEBHOOK_DISABLED, createdAt: EXAMPLE_TIME, data: { webhookId: 7, endpointUrl: 'https://merchant.example/hooks', disabledReason: 'failing since 2025-12-27T00:00:00.000Z (42 failed attempts, none succeeded)', disabledAt: EXAMPLE_TIME } },
    },
    {
      name: WEBHOOK_TEST,
      family: 'notice',
      description: 'sent by POST /v1/webhooks/{id}/test only, whatever the endpoint\'s event_types',
      example: { id: 'webhook.test:7:1767225600000', type: WEBHOOK_TEST, createdAt: EXAMPLE_TIME, data: { webhookId: 7, message: 'a test event from Tributary' } },
    },
  ];
  return [...chain, ...lifecycle, ...notices];
}

export const EVENT_TYPE_CATALOG: readonly EventTypeInfo[] = build();
