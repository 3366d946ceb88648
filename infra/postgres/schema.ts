/**
 * The database as kysely sees it: each projection and command area declares its own
 * tables beside its code, and they are composed here.
 */
import type { ArchiveTables } from '../../projections/archive/tables.js';
import type { RunnerTables } from '../../projections/runner/tables.js';
import type { KeysTables } from '../signing-keys/tables.js';
import type { GatewaysTables } from '../../projections/gateways/tables.js';
import type { UserPaymentsTables } from '../../projections/user-payments/tables.js';
import type { PolicyTables } from '../../projections/policies/tables.js';
import type { ComposableTables } from '../../projections/composable/tables.js';
import type { PaymentsTables } from '../../projections/payments/tables.js';
import type { StatsTables } from '../../projections/stats/tables.js';
import type { PoolTables } from '../../queries/pools/tables.js';
import type { WebhooksTables } from '../../commands/webhooks/tables.js';
import type { WebhookOutboxTables } from '../../projections/webhooks/tables.js';
import type { MerchantTables } from '../../projections/merchant/tables.js';
import type { SchedulerTables } from '../../commands/scheduler/tables.js';
import type { ApiKeysTables } from '../../commands/api-keys/tables.js';
import type { X402ResourceTables } from '../../commands/x402/facilitator/tables.js';
import type { PrepaidTables } from '../../commands/x402/prepaid/tables.js';
import type { X402ExactTables } from '../../commands/x402/exact/tables.js';
import type { CheckoutTables } from '../../commands/checkout/tables.js';
import type { GatewayAuthTables } from '../../commands/gateway-auth/tables.js';

export interface Database extends RunnerTables, ArchiveTables, KeysTables,
  GatewaysTables, UserPaymentsTables, PolicyTables, ComposableTables, PaymentsTables, StatsTables, PoolTables,
  WebhooksTables, WebhookOutboxTables, MerchantTables, SchedulerTables, ApiKeysTables, X402ResourceTables, PrepaidTables,
  X402ExactTables, CheckoutTables, GatewayAuthTables {}
