/**
 * SPEC "Subscriptions and policies": the three filtered lists (read model), a policy by
 * address (read from the chain), and a policy's executions (read model).
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import { createPdaDeriver, isPublicKey } from '../../src/kernel/domain/pda.js';
import type { PolicyKind } from '../../src/kernel/domain/policy.js';
import { envelope, envelopeSchema } from '../../src/kernel/http/envelope.js';
import { invalid } from '../../src/kernel/http/errors.js';
import type { Api } from '../../infra/http/routes.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { readPolicy, type ChainReadDeps } from './chain-read.js';
import { executionSchema, listExecutionDocs } from './executions.js';
import { resolveFilters, type FilterQuery, type ListEndpoint } from './filters.js';
import { trackingIdToMemo } from '../../src/kernel/domain/memo.js';
import { listPolicyDocs, type Page } from './policy-rows.js';
import { addressParams, filterQuerySchema, pageQuery, policyListResponse, policyResponse } from './schemas.js';
import { readScope } from '../../src/kernel/names/read-scopes.js';

const FILTER_HELP = 'At least one of the six filters is required and at most three may be combined (limit and offset are not filters). '
  + 'walletPublicKey requires tokenMint. When tokenMint is omitted, the list is restricted to the default stablecoin\'s mint. '
  + 'Deleted (closed) policies are left out; newest first. Every broken rule answers 400.';

interface Lists { endpoint: ListEndpoint; kind: PolicyKind; summary: string; userMeaning: string }

const LISTS: readonly Lists[] = [
  { endpoint: 'subscriptions', kind: 'payment', summary: 'Subscription policies by filter', userMeaning: 'userPublicKey is the user\'s owner wallet.' },
  { endpoint: 'payment-policies', kind: 'payment', summary: 'Payment policies of every variant by filter', userMeaning: 'userPublicKey is the user payment account.' },
  { endpoint: 'composable-policies', kind: 'composable', summary: 'Composable policies by filter', userMeaning: 'userPublicKey is the user payment account; trackingId is a 32-byte memo.' },
];

/**
 * The keys a list depends on (read cache): one filter every listed row carries, the
 * gateway's, the recipient's or the memo's, read off the query as resolveFilters reads
 * them (without its PDA derivations: a refused query is refused by the handler). Lists by
 * owner or user payment alone depend on any commit of the model.
 */
function policyScopes(q: FilterQuery, endpoint: ListEndpoint): string[] | undefined {
  if (q.gatewayPublicKey !== undefined) return [readScope.gateway(q.gatewayPublicKey)];
  if (q.recipient !== undefined) return [readScope.recipient(q.recipient)];
  const memo = q.trackingId !== undefined ? trackingIdToMemo(q.trackingId, endpoint === 'composable-policies' ? 32 : 64) : undefined;
  return memo ? [readScope.memo(memo)] : undefined;
}

function checkAddress(address: string): string {
  if (!isPublicKey(address)) throw invalid('address is not a base58 public key of 32 bytes');
  return address;
}

export interface PolicyRouteDeps {
  dbRead: Db;
  /** the configured chain: a policy missing from the read model is read there */
  rpc: RpcClient;
  logger: Logger;
  clock: Clock;
  config: Pick<Config, 'solana' | 'http'>;
}

export function registerPolicyRoutes(api: Api, ctx: PolicyRouteDeps): void {
  const { solana, http } = ctx.config;
  const pda = createPdaDeriver(solana.programId);
  const chain: ChainReadDeps = {
    db: ctx.dbRead,
    rpc: ctx.rpc,
    account: { programId: solana.programId, commitment: solana.commitment },
    logger: ctx.logger,
  };

  for (const l of LISTS) {
    api.route<FilterQuery & Page>({
      method: 'get',
      path: `/v1/${l.endpoint}`,
      summary: l.summary,
      description: `${FILTER_HELP} ${l.userMeaning}`,
      tags: ['policies'],
      query: filterQuerySchema(l.endpoint, solana.defaultStablecoin, http.maxLimit),
      responses: { 200: { description: 'normalized policies (read model)', schema: policyListResponse } },
      cachedFrom: [l.kind === 'payment' ? 'payment-policies' : 'composable-policies'],
      cacheScopes: (q) => policyScopes(q, l.endpoint),
      async handler({ query: q }) {
        const filter = resolveFilters(q, l.endpoint, { defaultMint: solana.defaultStablecoin, pda });
        return { json: await listPolicyDocs(ctx.dbRead, l.kind, filter, { limit: q.limit, offset: q.offset }), envelope: true };
      },
    });
  }

  for (const [endpoint, kind] of [['payment-policies', 'payment'], ['composable-policies', 'composable']] as const) {
    const what = kind === 'payment' ? 'payment policy' : 'composable policy';
    api.route<Record<string, never>, { address: string }>({
      method: 'get',
      path: `/v1/${endpoint}/:address`,
      summary: `A ${what}, read from the chain`,
      description: `Reads the account through the RPC and decodes it with the IDL's layout. 400: invalid address; 404: no ${what} account there; `
        + 'when the chain does not answer, the read model answers with source "read-model" and chainUnavailable true, or 503 when it has none.',
      tags: ['policies'],
      params: addressParams,
      query: { type: 'object', additionalProperties: false, properties: {} },
      responses: {
        200: { description: `the normalized ${what}`, schema: policyResponse },
        404: { description: `no ${what} at this address` },
        503: { description: 'the chain is unavailable and the read model has no such policy' },
      },
      async handler({ params }) {
        const policy = await readPolicy(chain, kind, checkAddress(params.address));
        return { body: envelope(policy, ctx.clock.now()) };
      },
    });

    api.route<Page, { address: string }>({
      method: 'get',
      path: `/v1/${endpoint}/:address/executions`,
      summary: `Executions of a ${what}, newest first`,
      description: `${kind === 'payment' ? 'PaymentRecord' : 'ComposableExecuted'} events of the policy (read model), newest first; an unknown policy has none.`,
      tags: ['policies'],
      params: addressParams,
      query: pageQuery(http.maxLimit),
      responses: { 200: { description: 'events', schema: envelopeSchema({ type: 'array', items: executionSchema(kind) }) } },
      cachedFrom: ['payments'],
      cacheScopes: (_q, p) => [readScope.policy(p.address)],
      async handler({ params, query }) {
        return { json: await listExecutionDocs(ctx.dbRead, kind, checkAddress(params.address), query), envelope: true };
      },
    });
  }
}
