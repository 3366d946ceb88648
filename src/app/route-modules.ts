/**
 * Every route module of the API node, in registration order. A new area adds one line.
 */
import type { RouteModule } from './http-app.js';
import { registerHealthRoutes } from '../../queries/health/routes.js';
import { registerPolicyRoutes } from '../../queries/policies/routes.js';
import { registerOneTimeRoutes } from '../../queries/onetime/routes.js';
import { registerEventRoutes } from '../../queries/events/routes.js';
import { registerAssetRoutes } from '../../queries/assets/routes.js';
import { registerPoolRoutes } from '../../queries/pools/routes.js';
import { registerSkillRoutes } from '../../queries/skill/routes.js';
import { registerWebhookRoutes } from '../../commands/webhooks/routes.js';
import { registerSigningRoutes } from './signing-routes.js';
import { registerX402Routes } from '../../commands/x402/routes.js';
import { registerMerchantViewRoutes } from '../../queries/merchant/view-routes.js';
import { registerDashboardRoutes } from '../../queries/dashboard/routes.js';
import { registerCheckoutPage } from '../../infra/http/web-pages.js';
import { registerAccountPage } from '../../infra/http/account-page.js';
import { registerSchedulerRoutes } from '../../commands/scheduler/routes.js';
import { registerFacilitatorRoutes } from '../../commands/x402/facilitator/routes.js';
import { registerApiKeyRoutes } from '../../commands/api-keys/routes.js';
import { registerReconciliationRoutes } from './reconciliation.js';
import { registerExactAdminRoutes } from '../../commands/x402/exact/routes.js';
import { exactFacilitatorOf } from './x402-exact.js';
import { registerPayerAccountRoutes } from '../../commands/payer-account/routes.js';
import { registerMeRoutes } from '../../queries/me/routes.js';
import { registerMcpRoutes } from './mcp/http.js';
import { registerCheckout } from './checkout.js';

export const ROUTE_MODULES: readonly RouteModule[] = [
  registerHealthRoutes,
  registerPolicyRoutes,
  registerOneTimeRoutes,
  registerEventRoutes,
  registerAssetRoutes,
  registerPoolRoutes,
  registerSkillRoutes,
  registerWebhookRoutes,
  registerSigningRoutes,
  // the demo sells exact through the node's exact facilitator too
  (api, node) => registerX402Routes(api, { ...node, exact: exactFacilitatorOf(node) }),
  registerMerchantViewRoutes,
  registerDashboardRoutes,
  registerCheckoutPage,
  registerSchedulerRoutes,
  // the node's exact facilitator (src/app/x402-exact.ts) beside the engine's schemes
  (api, node) => registerFacilitatorRoutes(api, { ...node, exact: exactFacilitatorOf(node) }),
  registerApiKeyRoutes,
  registerReconciliationRoutes,
  registerExactAdminRoutes,
  // /mcp when MCP_ENABLED
  registerMcpRoutes,
  registerPayerAccountRoutes,
  registerMeRoutes,
  registerAccountPage,
  registerCheckout,
];
