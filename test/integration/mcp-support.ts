/**
 * What the MCP tests share: the x402 harness (a localnet in-process, an API node) with a
 * second API node serving /mcp (MCP_ENABLED) on the same database, prefix and chain; the
 * agent's side, @x402/core's x402Client with Tributary's client schemes, building the
 * PaymentPayload from a paid tool's PaymentRequired; and the read side brought up to date
 * (the indexer over the localnet, then every projection).
 */
import type { Keypair } from '@solana/web3.js';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { resignStandardPayload, tributaryClientSchemes } from '../../commands/x402/plugins/client.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { startIndexer } from '../../infra/indexer/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { registerMcpRoutes } from '../../src/app/mcp/http.js';
import { project } from './readmodels-scenario.js';
import { startX402, type X402Harness } from './x402-harness.js';

export const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{87,88}$/;

/** An admin key set for the test, to prove no tool text shows it. */
export const ADMIN_KEY = 'mcp-test-admin-key-0123456789abcdef0123456789';

export interface McpHarness { h: X402Harness; mcp: TestApi; close(): Promise<void> }

export async function startMcp(tag: string): Promise<McpHarness> {
  const h = await startX402(tag, { MCP_ENABLED: 'true', ADMIN_API_KEY: ADMIN_KEY });
  const mcp = await startTestApi(h.env, { ...h.overrides, MCP_ENABLED: 'true' }, { modules: [registerMcpRoutes] });
  return { h, mcp, close: async () => { await mcp.close(); await h.close(); } };
}

/** The PaymentPayload the ecosystem's client builds for a PaymentRequired, paying with `wallet`. */
export async function agentPayload(h: X402Harness, wallet: Keypair, required: PaymentRequired): Promise<PaymentPayload> {
  const client = new x402Client();
  for (const s of tributaryClientSchemes(wallet, { rpcUrl: h.ln.rpcUrl })) client.register('solana:*', s);
  return client.createPaymentPayload(required);
}

/** The same payment sent again, as the agent's own client sends it: with a fresh proof (the SDK's resignStandardPayload). */
export const resignedPayload = resignStandardPayload;

/** The PaymentRequired of a tool result that asks for payment. */
export function requiredOf(r: CallToolResult): PaymentRequired {
  return r.structuredContent as unknown as PaymentRequired;
}

export function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** Every event on the localnet so far indexed and projected into the read models. */
export async function catchUpReadModels(h: X402Harness): Promise<void> {
  const config = loadConfig({ ...h.env.env, SOLANA_RPC_URL: h.ln.rpcUrl, SOLANA_WS_URL: h.ln.wsUrl, SOLANA_CLUSTER: 'localnet', LOCALNET_SEED: h.seed, INDEXER_BACKFILL_INTERVAL_MS: '500' });
  const indexer = await startIndexer({ config, redis: h.env.redis, logger: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'indexer') });
  try {
    await indexer.settled();
  } finally {
    await indexer.stop();
  }
  await project(h.env, PROJECTIONS, [], 200);
}

/** Secrets of the test's environment that no tool text may show. */
export function secretsOf(h: X402Harness): string[] {
  return [h.env.dbUrl, h.env.redisUrl, ADMIN_KEY, new URL(h.env.dbUrl).host, h.env.prefix];
}
