/**
 * The per-kind event lists of SPEC (/v1/events/payments, /policies/*, /gateways/*, …):
 * one event kind each, filtered by public keys in its fields. Declared as data: a query
 * parameter (camelCase) maps to the IDL field (snake_case) it must equal.
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import type { EventName } from '../../src/kernel/events/catalog.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key, limitSchema, offsetSchema } from '../../src/kernel/http/schema.js';
import { typedEventListSchema } from './event-schema.js';
import { listEventsJson } from './events-query.js';

interface KindRoute {
  path: string;
  name: EventName;
  summary: string;
  /** query parameter → IDL field of the event */
  filters: Record<string, string>;
}

export const KIND_ROUTES: readonly KindRoute[] = [
  { path: '/v1/events/payments', name: 'PaymentRecord', summary: 'Payments (PaymentRecord events)', filters: { gateway: 'gateway', paymentPolicy: 'payment_policy' } },
  { path: '/v1/events/policies/created', name: 'PaymentPolicyCreated', summary: 'Payment policies created', filters: { gateway: 'gateway', recipient: 'recipient', userPayment: 'user_payment' } },
  { path: '/v1/events/policies/deleted', name: 'PaymentPolicyDeleted', summary: 'Payment policies deleted', filters: { owner: 'owner', paymentPolicy: 'payment_policy' } },
  { path: '/v1/events/policies/status-changed', name: 'PaymentPolicyStatusChanged', summary: 'Payment policy status changes', filters: { paymentPolicy: 'payment_policy' } },
  { path: '/v1/events/gateways/created', name: 'PaymentGatewayCreated', summary: 'Gateways created', filters: { authority: 'authority' } },
  { path: '/v1/events/gateways/deleted', name: 'PaymentGatewayDeleted', summary: 'Gateways deleted', filters: { authority: 'authority', gateway: 'gateway' } },
  { path: '/v1/events/gateways/fee-bps-changed', name: 'GatewayFeeBpsChanged', summary: 'Gateway fee changes', filters: { gateway: 'gateway' } },
  { path: '/v1/events/gateways/fee-recipient-changed', name: 'GatewayFeeRecipientChanged', summary: 'Gateway fee recipient changes', filters: { gateway: 'gateway' } },
  { path: '/v1/events/gateways/signer-changed', name: 'GatewaySignerChanged', summary: 'Gateway signer changes', filters: { gateway: 'gateway' } },
  { path: '/v1/events/referrals/rewards', name: 'ReferralRewardDistributedRecord', summary: 'Referral rewards distributed', filters: { gateway: 'gateway', paymentPolicy: 'payment_policy' } },
  { path: '/v1/events/user-payments/created', name: 'UserPaymentCreated', summary: 'User payment accounts created', filters: { owner: 'owner', tokenMint: 'token_mint' } },
  { path: '/v1/events/program/config-created', name: 'ProgramConfigCreated', summary: 'Program configuration created', filters: { admin: 'admin' } },
];

type KindQuery = Record<string, string | number | undefined> & { limit: number; offset: number };

export function registerKindRoutes(api: Api, ctx: { dbRead: Db; config: Pick<Config, 'http'> }): void {
  for (const r of KIND_ROUTES) {
    const keyProps = Object.fromEntries(
      Object.entries(r.filters).map(([param, field]) => [param, { ...base58Key, description: `only events whose ${field} is this key` }]),
    );
    api.route<KindQuery>({
      method: 'get',
      path: r.path,
      summary: r.summary,
      description: `${r.name} events, newest first (slot, then arrival). Filters combine with AND. Bare array (no envelope).`,
      tags: ['events'],
      query: {
        type: 'object',
        additionalProperties: false,
        properties: { ...keyProps, limit: limitSchema(100, ctx.config.http.maxLimit), offset: offsetSchema },
      },
      responses: { 200: { description: `${r.name} events`, schema: typedEventListSchema(r.name) } },
      cachedFrom: ['archive'],
      async handler({ query }) {
        const fields: Record<string, string> = {};
        for (const [param, field] of Object.entries(r.filters)) {
          const v = query[param];
          if (typeof v === 'string') fields[field] = v;
        }
        return { json: await listEventsJson(ctx.dbRead, { name: r.name, fields }, { limit: query.limit, offset: query.offset }) };
      },
    });
  }
}
