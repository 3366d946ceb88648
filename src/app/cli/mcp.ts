/**
 * `tributary mcp`: the Tributary MCP server (src/app/mcp/server.ts) over stdio, for an
 * agent that starts it as a child process. stdout carries the protocol alone: logs go to
 * stderr. The same tools are served over Streamable HTTP at /mcp on the API when
 * MCP_ENABLED is set. It stops when stdin closes or on SIGTERM/SIGINT.
 */
import { pino } from 'pino';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ExtraCommand } from './command.js';
import { loadConfigOrExit } from './process.js';
import { buildContext, closeContext } from '../build-context.js';
import { REDACT_PATHS } from '../../../infra/log/logger.js';
import { createPaymentEngine } from '../../../commands/x402/engine.js';
import { buildNode } from '../node.js';
import { mintAmountsOf } from '../checkout.js';
import { createTributaryMcpServer } from '../mcp/server.js';

export const mcpCommand: ExtraCommand = {
  usage: 'mcp',
  summary: 'the MCP server over stdio: read tools for agents and a paid tool (x402 MCP transport)',
  async run(_args, env) {
    const config = loadConfigOrExit(env);
    const logger = pino({ level: config.logLevel, name: 'mcp', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, pino.destination(2));
    const ctx = buildContext(config, logger, 'mcp');
    const node = buildNode(ctx);
    const keyRing = node.keyRing;
    const engine = createPaymentEngine(node.x402);
    // create_checkout_session acts for the gateway of this API key (there is no request header on stdio)
    const checkout = { ...node, amounts: mintAmountsOf(node), apiKey: env['TRIBUTARY_API_KEY'] };
    const server = createTributaryMcpServer({ dbRead: ctx.dbRead, logger, clock: ctx.clock, config, engine, checkout });
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await server.close().catch(() => undefined);
      await keyRing.close().catch(() => undefined);
      await closeContext(ctx).catch(() => undefined);
      process.exit(0);
    };
    process.stdin.on('close', () => void stop());
    process.stdin.on('end', () => void stop());
    process.on('SIGTERM', () => void stop());
    process.on('SIGINT', () => void stop());
    await server.connect(new StdioServerTransport());
    logger.info('mcp server on stdio');
  },
};
