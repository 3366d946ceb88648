/**
 * The MCP server's checkout tools (commands/checkout, queries/me: the same functions the
 * REST routes call):
 * - quote_checkout: what a payer would pay for a requirement or a session (amount, fees,
 *   first charge, how often); no credentials.
 * - create_checkout_session: a hosted checkout session, for the gateway whose credentials
 *   the call carries: over Streamable HTTP the request's x-api-key or Authorization
 *   (a gateway JWT), over stdio TRIBUTARY_API_KEY (a gateway API key) from the environment
 *   `tributary mcp` was started with.
 * - payer_subscriptions: the subscriptions of the wallet a payer token (POST /v1/me/auth/verify)
 *   names, as GET /v1/me/subscriptions lists them.
 * No tool's text carries a credential: a refused one is named by its kind, never echoed.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestInfo } from '@modelcontextprotocol/sdk/types.js';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';
import type { RpcClient } from '../../../infra/solana/rpc-client.js';
import type { Config } from '../../kernel/config/config.js';
import type { Clock } from '../../kernel/domain/clock.js';
import { createPdaDeriver } from '../../kernel/domain/pda.js';
import { verifyPayerToken } from '../../kernel/auth/payer-token.js';
import { settlementCommitment } from '../../../infra/solana/chain-reader.js';
import { SCHEMES } from '../../../commands/x402/requirements.js';
import { gatewayOfCredential, type CredentialDeps } from '../../../commands/checkout/credential.js';
import { quoteOf, type PublicDeps } from '../../../commands/checkout/public-view.js';
import { parseRequirement, requirementOf, type MintAmounts } from '../../../commands/checkout/requirement.js';
import { createSession, sessionOf, type CheckoutDeps } from '../../../commands/checkout/sessions.js';
import { storedOf } from '../../../commands/checkout/store.js';
import { mintDecimalsReader } from '../../../queries/me/decimals.js';
import { listSubscriptions } from '../../../queries/me/subscriptions.js';
import { answer, guarded } from './read-tools.js';

export interface CheckoutToolDeps extends CredentialDeps {
  db: Db;
  dbRead: Db;
  rpc: RpcClient;
  clock: Clock;
  logger: Logger;
  amounts: MintAmounts;
  config: Pick<Config, 'http' | 'solana' | 'access'>;
  /** stdio: the gateway API key of TRIBUTARY_API_KEY */
  apiKey?: string | undefined;
}

const requirementShape = z.object({
  scheme: z.enum(SCHEMES), network: z.string().describe('CAIP-2, e.g. solana:localnet'),
  amount: z.union([z.number().int(), z.string()]).describe('base units, or whole tokens as a decimal string with a point ("12.5")'),
  recipient: z.string(), gateway: z.string(), tokenMint: z.string(),
}).passthrough().describe('an accepts entry of a 402 answer: the scheme\'s terms (paymentFrequency, maxAmountPerPeriod, ...) beside these');

function header(info: RequestInfo | undefined, name: string): string | undefined {
  const v = info?.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function pageBase(deps: CheckoutToolDeps, info: RequestInfo | undefined): string {
  if (deps.config.http.publicUrl) return deps.config.http.publicUrl.replace(/\/+$/, '');
  const host = header(info, 'host') ?? '';
  return /^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(host) ? `http://${host}` : `http://localhost:${deps.config.http.port}`;
}

export function registerCheckoutTools(server: McpServer, deps: CheckoutToolDeps): void {
  const { solana } = deps.config;
  const requirements = { programId: solana.programId, graceCapSeconds: deps.config.access.subscriptionGraceSeconds };
  const checkout: CheckoutDeps = { db: deps.db, amounts: deps.amounts, requirements, now: () => deps.clock.now() };
  const pub: PublicDeps = {
    amounts: deps.amounts, requirements,
    fees: { rpc: deps.rpc, programId: solana.programId, commitment: settlementCommitment(solana.commitment), configAddress: createPdaDeriver(solana.programId).config() },
  };
  const decimalsOf = mintDecimalsReader(deps.rpc, solana.commitment);

  server.registerTool('quote_checkout', {
    title: 'Quote a checkout',
    description: 'What a payer would pay: the amount in whole tokens, how often, the gateway and protocol fees as the program takes them, and the first charge. Give a requirement (an accepts entry) or a checkout session id.',
    inputSchema: {
      requirement: requirementShape.optional(),
      sessionId: z.string().regex(/^cs_[A-Za-z0-9_-]{24}$/).describe('a hosted checkout session (cs_...)').optional(),
    },
  }, guarded('quote_checkout', deps.logger, async (a) => {
    if ((a.requirement === undefined) === (a.sessionId === undefined)) return answerError('give exactly one of requirement and sessionId');
    const r = a.sessionId !== undefined
      ? requirementOf(storedOf(await sessionOf(checkout, a.sessionId)), requirements)
      : (await parseRequirement(a.requirement as Record<string, unknown>, undefined, 'mcp:quote', requirements, deps.amounts)).requirement;
    return answer({ ...await quoteOf(pub, r) });
  }));

  server.registerTool('create_checkout_session', {
    title: 'Create a checkout session',
    description: 'A hosted checkout page (/checkout/{id}) selling one requirement once, for the gateway of the call\'s credentials: over HTTP the x-api-key or '
      + 'Authorization: Bearer <gateway JWT> header, over stdio the TRIBUTARY_API_KEY environment variable (a gateway API key). Answers {id, url, expiresAt}.',
    inputSchema: {
      requirement: requirementShape,
      trackingId: z.string().min(1).max(64).describe('the merchant\'s reference: the policy memo and the room its events reach'),
      successUrl: z.string().max(2048).describe('http or https'),
      cancelUrl: z.string().max(2048).describe('http or https'),
      expiresInSeconds: z.number().int().min(60).max(604_800).describe('default 1800').optional(),
      label: z.string().min(1).max(120).optional(),
    },
  }, guarded('create_checkout_session', deps.logger, async (a, extra) => {
    const info = extra.requestInfo;
    const apiKey = header(info, 'x-api-key') ?? (info === undefined ? deps.apiKey : undefined);
    const authorization = header(info, 'authorization');
    if (apiKey === undefined && authorization === undefined) {
      return answerError('create_checkout_session needs gateway credentials: over HTTP an x-api-key or Authorization: Bearer <gateway JWT> header; over stdio start `tributary mcp` with TRIBUTARY_API_KEY set');
    }
    const gateway = await gatewayOfCredential(deps, apiKey, authorization);
    const { requirement, ...rest } = a;
    return answer({ ...await createSession(checkout, gateway, { ...rest, requirement }, pageBase(deps, info)) });
  }));

  server.registerTool('payer_subscriptions', {
    title: 'A payer\'s subscriptions',
    description: 'Every payment policy of the wallet a payer token names (sign in with POST /v1/me/auth/challenge and /verify), across gateways and mints, as GET /v1/me/subscriptions lists them.',
    inputSchema: { payerToken: z.string().min(20).max(4096).describe('the token of POST /v1/me/auth/verify') },
  }, guarded('payer_subscriptions', deps.logger, async (a) => {
    const wallet = await verifyPayerToken(deps.keyRing, a.payerToken);
    return answer({ wallet, subscriptions: await listSubscriptions(deps.dbRead, decimalsOf, wallet) });
  }));
}

function answerError(text: string) {
  return { isError: true, content: [{ type: 'text' as const, text }] };
}
