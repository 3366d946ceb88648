/**
 * /mcp on the API node (MCP_ENABLED): the Tributary MCP server (server.ts) over Streamable
 * HTTP, stateless: every POST is one JSON-RPC exchange with a server object of its own, so
 * any node behind the load balancer answers any request (no session lives in a node's
 * memory; an idle server object is reused, never a session). GET (a server-initiated stream) and DELETE (a session's end) have nothing to
 * serve without sessions: 405, as the transport's specification allows.
 */
import type { RequestHandler } from 'express';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Api } from '../../../infra/http/routes.js';
import { createPaymentEngine } from '../../../commands/x402/engine.js';
import type { AppNode } from '../node.js';
import { createTributaryMcpServer, type McpDeps } from './server.js';
import { mintAmountsOf } from '../checkout.js';

export const MCP_PATH = '/mcp';

const DESCRIPTION = 'The Model Context Protocol over Streamable HTTP (stateless; docs/mcp.md): JSON-RPC 2.0 requests '
  + '(initialize, tools/list, tools/call) with Accept: application/json, text/event-stream. Paid tools follow the x402 MCP transport: '
  + 'an unpaid call answers isError with the PaymentRequired in structuredContent; the PaymentPayload goes in params._meta["x402/payment"], '
  + 'the receipt comes back in result._meta["x402/payment-response"].';

/** Idle server objects kept for the next request: building one (its tools, their schemas) costs about as much as the read it serves. */
const IDLE_SERVERS = 32;

function mcpHandler(deps: McpDeps): RequestHandler {
  const idle: McpServer[] = [];
  return async (req, res, next) => {
    const server = idle.pop() ?? createTributaryMcpServer(deps);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      // a server serves one transport at a time: it is reused only once this exchange's is closed
      void server.close().then(() => { if (idle.length < IDLE_SERVERS) idle.push(server); }, () => undefined);
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      next(err);
    }
  };
}

const notAllowed: RequestHandler = (_req, res) => {
  res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'method not allowed: this MCP endpoint is stateless, POST JSON-RPC requests' }, id: null });
};

export function registerMcpRoutes(api: Api, node: AppNode): void {
  if (!node.config.mcp.enabled) return;
  const deps: McpDeps = {
    dbRead: node.dbRead, logger: node.logger, clock: node.clock, config: node.config, engine: createPaymentEngine(node.x402),
    checkout: { ...node, amounts: mintAmountsOf(node) },
  };
  const responses = { 200: { description: 'the JSON-RPC answer' }, 400: { description: 'not a JSON-RPC request' }, 406: { description: 'Accept must name application/json and text/event-stream' } };
  api.route({ method: 'post', path: MCP_PATH, summary: 'MCP (Streamable HTTP): tools for agents, paid tools over x402', description: DESCRIPTION, tags: ['mcp'], before: [mcpHandler(deps)], responses, handler: async () => undefined });
  for (const method of ['get', 'delete'] as const) {
    api.route({ method, path: MCP_PATH, summary: `MCP: ${method.toUpperCase()} is not served (stateless)`, tags: ['mcp'], before: [notAllowed], responses: { 405: { description: 'POST only' } }, handler: async () => undefined });
  }
}
