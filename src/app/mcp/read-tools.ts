/**
 * The MCP server's read tools: the same query functions the REST routes call (policies,
 * events, payments), never HTTP. Inputs are zod shapes (their JSON schemas are what
 * tools/list shows); a refused input is a tool error naming the rule, as the REST routes'
 * 400s do; an unexpected failure is a fixed sentence, its text (a store's, which could
 * name a host or a URL with credentials) only in the log (paid-tool.ts, clientMessage).
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';
import type { Config } from '../../kernel/config/config.js';
import { invalid } from '../../kernel/http/errors.js';
import { clientMessage } from '../../../commands/x402/mcp/paid-tool.js';
import { createPdaDeriver, isPublicKey } from '../../kernel/domain/pda.js';
import { resolveFilters } from '../../../queries/policies/filters.js';
import { listPolicyDocs } from '../../../queries/policies/policy-rows.js';
import { listExecutionDocs } from '../../../queries/policies/executions.js';
import { findBySignature, listEvents, type EventWhere } from '../../../queries/events/events-query.js';
import { EVENT_NAME_INPUTS, eventNameParam, trackingIdMemos } from '../../../queries/events/params.js';

export interface ReadToolDeps {
  dbRead: Db;
  logger: Logger;
  config: Pick<Config, 'solana' | 'http'>;
}

const base58 = (what: string) => z.string().min(32).max(44).describe(what);
const page = (max: number) => ({
  limit: z.number().int().min(1).max(max).default(20).describe(`page size, 1 to ${max}`),
  offset: z.number().int().min(0).max(100_000).default(0).describe('rows to skip'),
});

/** JSON as the tool's text and structured answer. */
export function answer(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** A handler whose typed errors (4xx, an unreachable store) are told as they are, and anything else as a fixed sentence. */
export function guarded<A, E = unknown>(name: string, logger: Logger, run: (args: A, extra: E) => Promise<CallToolResult>): (args: A, extra: E) => Promise<CallToolResult> {
  return async (args, extra) => {
    try {
      return await run(args, extra);
    } catch (err) {
      const told = clientMessage(err);
      if (told !== undefined) return toolError(told);
      logger.error({ err, tool: name }, 'mcp tool failed');
      return toolError(`${name} failed (internal error); try again later`);
    }
  };
}

const parsed = (text: string | Buffer): unknown => JSON.parse(text.toString()) as unknown;

export function registerReadTools(server: McpServer, deps: ReadToolDeps): void {
  const { solana, http } = deps.config;
  const pda = createPdaDeriver(solana.programId);
  const max = Math.min(http.maxLimit, 100);

  server.registerTool('subscription_status', {
    title: 'Subscription status',
    description: 'Whether a wallet or a trackingId holds an active subscription, and its subscriptions (newest first) with status, '
      + 'amount, payments made and the next payment due. Give walletPublicKey or trackingId (or both); tokenMint defaults to the service\'s stablecoin.',
    inputSchema: {
      walletPublicKey: base58('the payer\'s wallet (owner of the user payment)').optional(),
      trackingId: z.string().min(1).max(64).describe('the tracking id the subscription\'s memo carries').optional(),
      tokenMint: base58('the mint paid in; default the service\'s stablecoin').optional(),
      gatewayPublicKey: base58('only subscriptions through this gateway').optional(),
      ...page(max),
    },
  }, guarded('subscription_status', deps.logger, async (a) => {
    if (a.walletPublicKey === undefined && a.trackingId === undefined) throw invalid('give walletPublicKey or trackingId');
    const tokenMint = a.tokenMint ?? solana.defaultStablecoin;
    const filter = resolveFilters({
      tokenMint,
      ...(a.walletPublicKey !== undefined ? { walletPublicKey: a.walletPublicKey } : {}),
      ...(a.trackingId !== undefined ? { trackingId: a.trackingId } : {}),
      ...(a.gatewayPublicKey !== undefined ? { gatewayPublicKey: a.gatewayPublicKey } : {}),
    }, 'subscriptions', { defaultMint: solana.defaultStablecoin, pda });
    const subscriptions = parsed(await listPolicyDocs(deps.dbRead, 'payment', filter, { limit: a.limit, offset: a.offset })) as { status?: string }[];
    return answer({ active: subscriptions.some((s) => s.status === 'Active'), tokenMint, subscriptions });
  }));

  server.registerTool('list_events', {
    title: 'Program events',
    description: 'Events the indexer decoded from the Tributary program, newest first: one by transaction signature, or filtered by event name and trackingId.',
    inputSchema: {
      signature: z.string().min(64).max(88).describe('a transaction signature (base58): the events of that transaction').optional(),
      name: z.enum(EVENT_NAME_INPUTS as [string, ...string[]]).describe('an event name (PaymentRecord, PolicyCreated, ...)').optional(),
      trackingId: z.string().min(1).max(64).describe('events whose memo is this tracking id').optional(),
      ...page(max),
    },
  }, guarded('list_events', deps.logger, async (a) => {
    if (a.signature !== undefined) {
      const event = await findBySignature(deps.dbRead, a.signature);
      return answer({ events: event ? [event] : [] });
    }
    const where: EventWhere = {
      ...(a.name !== undefined ? { name: eventNameParam(a.name) } : {}),
      ...(a.trackingId !== undefined ? { memos: trackingIdMemos(a.trackingId) } : {}),
    };
    return answer({ events: await listEvents(deps.dbRead, where, { limit: a.limit, offset: a.offset }) });
  }));

  server.registerTool('policy_payments', {
    title: 'Payments of a policy',
    description: 'The payments executed under a payment policy (PaymentRecord events from the read model), newest first.',
    inputSchema: { policy: base58('the payment policy account'), ...page(max) },
  }, guarded('policy_payments', deps.logger, async (a) => {
    if (!isPublicKey(a.policy)) throw invalid('policy is not a base58 public key of 32 bytes');
    return answer({ policy: a.policy, payments: parsed(await listExecutionDocs(deps.dbRead, 'payment', a.policy, { limit: a.limit, offset: a.offset })) });
  }));
}
