/**
 * Every projection the projector role runs, by name. A new read model registers here
 * (and its tables in infra/postgres/schema.ts and a migration in infra/migrations).
 */
import { archiveProjection } from './archive/projection.js';
import type { Projection } from './runner/projection.js';
import { gatewaysProjection } from './gateways/projection.js';
import { userPaymentsProjection } from './user-payments/projection.js';
import { paymentPoliciesProjection } from './policies/projection.js';
import { composablePoliciesProjection } from './composable/projection.js';
import { paymentsProjection } from './payments/projection.js';
import { statsProjection } from './stats/projection.js';
import { webhooksProjection } from './webhooks/projection.js';
import { merchantProjection } from './merchant/projection.js';

export const PROJECTIONS: readonly Projection[] = [
  archiveProjection,
  gatewaysProjection, userPaymentsProjection, paymentPoliciesProjection, composablePoliciesProjection, paymentsProjection, statsProjection,
  webhooksProjection,
  merchantProjection,
];

export function findProjection(name: string): Projection | undefined {
  return PROJECTIONS.find((p) => p.name === name);
}
