/**
 * The Tributary MCP server: read tools for agents (read-tools.ts), checkout tools
 * (checkout-tools.ts) and one paid tool,
 * `demo_report`, sold under the x402 MCP transport (commands/x402/mcp/paid-tool.ts) with
 * the demo resource's requirements (commands/x402/demo.ts), so an agent can try paying.
 * One server object per connection (stdio) or per request (stateless Streamable HTTP,
 * http.ts); the engine and the stores are the node's, shared.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Clock } from '../../kernel/domain/clock.js';
import type { Config } from '../../kernel/config/config.js';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';
import type { PaymentEngine } from '../../../commands/x402/engine.js';
import { demoSetup } from '../../../commands/x402/demo.js';
import { paidTool } from '../../../commands/x402/mcp/paid-tool.js';
import { API_VERSION } from '../../kernel/http/version.js';
import { registerReadTools } from './read-tools.js';
import { registerCheckoutTools, type CheckoutToolDeps } from './checkout-tools.js';

export interface McpDeps {
  dbRead: Db;
  logger: Logger;
  clock: Clock;
  config: Config;
  /** the node's payment engine: the same one the middleware and the facilitator call */
  engine: PaymentEngine;
  /** the checkout tools' collaborators (checkout-tools.ts); absent, those tools are not served */
  checkout?: CheckoutToolDeps;
}

export const DEMO_TOOL = 'demo_report';

export function createTributaryMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer({ name: 'tributary', version: API_VERSION });
  registerReadTools(server, deps);
  if (deps.checkout) registerCheckoutTools(server, deps.checkout);
  const demo = demoSetup(deps.config);
  if (demo.on) {
    paidTool(server, DEMO_TOOL, {
      title: 'Demo report (paid)',
      description: 'A demo report sold under the x402 MCP transport: call it without payment to read the PaymentRequired in structuredContent, '
        + 'then again with a PaymentPayload in _meta["x402/payment"] (a Tributary scheme: deferred subscription or x402://payg); '
        + 'the receipt comes back in _meta["x402/payment-response"].',
      graceCapSeconds: deps.config.access.subscriptionGraceSeconds,
      onError: (err) => deps.logger.error({ err, tool: DEMO_TOOL }, 'mcp paid tool failed'),
    }, demo.requirements, deps.engine, async (paid) => {
      const report = {
        content: 'Tributary demo report: paid for on chain, served over MCP.',
        policy: paid.receipt.extra?.['policy'], scheme: paid.requirement.scheme, servedAt: deps.clock.now(),
      };
      return { content: [{ type: 'text', text: JSON.stringify(report) }], structuredContent: report };
    });
  }
  return server;
}
