/**
 * /v1/gateway/{gateway}/scheduler: a merchant delegates execution to the service without
 * handing over its authority key (POST), sees the scheduler's state for its gateway
 * (GET), and stops it (DELETE). Credentials: the gateway's JWT (gateway sign-in) or
 * `x-admin-key`; another gateway's token is 403.
 */
import { settlementCommitment } from '../../infra/solana/chain-reader.js';
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Api } from '../../infra/http/routes.js';
import { base58Key, type JsonSchema } from '../../src/kernel/http/schema.js';
import { requireGatewayToken, type TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { chainIo } from './chain.js';
import { delegate, schedulerStatus, stop, type SchedulerServiceDeps } from './service.js';

const gatewayParams: JsonSchema = {
  type: 'object',
  required: ['gateway'],
  properties: { gateway: { ...base58Key, description: 'gateway account address (base58)' } },
};

const delegationSchema: JsonSchema = {
  type: 'object',
  required: ['gateway', 'authority', 'signer', 'state', 'transaction', 'message'],
  properties: {
    gateway: { type: 'string' },
    authority: { type: 'string', description: 'the gateway authority, who signs the transaction' },
    signer: { type: 'string', description: 'public key of the signer the service holds for the gateway (its secret key is stored encrypted)' },
    state: { type: 'string', enum: ['pending', 'active'], description: 'active once the chain names this signer' },
    transaction: { type: ['string', 'null'], description: 'base64 of the unsigned change_gateway_signer transaction (fee payer: the authority); null when the chain names the signer already' },
    message: { type: 'string' },
  },
};

const statusSchema: JsonSchema = {
  type: 'object',
  required: ['gateway', 'signer', 'state', 'signerError', 'signerLamports', 'lowBalance', 'due', 'pastDue', 'executed', 'failed', 'givenUp', 'unsettledUsage'],
  properties: {
    gateway: { type: 'string' },
    signer: { type: 'string' },
    state: { type: 'string', enum: ['pending', 'active', 'stopped'] },
    signerError: { type: ['string', 'null'], description: 'why the stored signer key does not open (its payments and settlement wait until the gateway is delegated again); null when it opens' },
    signerLamports: { type: ['integer', 'null'], description: 'the signer\'s SOL balance in lamports (null when the chain did not answer)' },
    lowBalance: { type: 'boolean', description: 'below SCHEDULER_SIGNER_MIN_LAMPORTS: transaction fees may soon fail' },
    due: { type: 'integer', description: 'payments due and not executed yet' },
    pastDue: { type: 'integer', description: 'payments waiting on the dunning schedule' },
    executed: { type: 'integer' },
    givenUp: { type: 'integer', description: 'payments given up after the dunning schedule (subscription.canceled)' },
    failed: { type: 'object', additionalProperties: { type: 'integer' }, description: 'failed attempts by reason (InsufficientBalance, NoDelegateSet, rpc, …)' },
    unsettledUsage: { type: 'string', description: 'metered pay-as-you-go usage not charged yet, smallest units' },
  },
};

const stoppedSchema: JsonSchema = {
  type: 'object', required: ['gateway', 'state'], properties: { gateway: { type: 'string' }, state: { type: 'string', enum: ['stopped'] } },
};

const SECURITY: Record<string, string[]>[] = [{ BearerAuth: [] }, { AdminApiKey: [] }];
const AUTH_ERRORS = {
  400: { description: 'malformed gateway address' },
  401: { description: 'no credential, or an invalid or expired one' },
  403: { description: 'the token was issued for another gateway' },
};

export interface SchedulerRouteDeps {
  db: Db;
  /** the configured chain */
  rpc: RpcClient;
  keyRing: TokenVerifier;
  /** the gateway's keys now: a token of a wallet that is no longer the gateway's is refused */
  gatewayKeys: GatewayLookup;
  config: Pick<Config, 'solana' | 'keys' | 'scheduler'>;
}

export function registerSchedulerRoutes(api: Api, ctx: SchedulerRouteDeps): void {
  const { solana } = ctx.config;
  const deps: SchedulerServiceDeps = {
    db: ctx.db,
    io: chainIo(ctx.rpc, solana.programId, settlementCommitment(solana.commitment)),
    encryptionKey: ctx.config.keys.encryptionKey,
    signerMinLamports: ctx.config.scheduler.signerMinLamports,
  };
  const auth = requireGatewayToken(ctx.keyRing, { adminKey: ctx.config.keys.adminApiKey, keys: ctx.gatewayKeys });
  const path = '/v1/gateway/:gateway/scheduler';

  api.route<Record<string, never>, { gateway: string }>({
    method: 'post', path, tags: ['scheduler'], security: SECURITY, before: [auth], params: gatewayParams,
    summary: 'Delegate payment execution to the service',
    description: 'Creates (or answers again) the signer keypair the service executes with for this gateway, and the unsigned change_gateway_signer transaction for the gateway authority to sign and send. The authority key never leaves the merchant.',
    responses: {
      200: { description: 'the signer and the transaction to sign', schema: delegationSchema },
      ...AUTH_ERRORS,
      404: { description: 'no payment gateway at this address' },
      503: { description: 'the chain did not answer' },
    },
    async handler({ params }) {
      return { body: await delegate(deps, params.gateway) };
    },
  });

  api.route<Record<string, never>, { gateway: string }>({
    method: 'get', path, tags: ['scheduler'], security: SECURITY, before: [auth], params: gatewayParams,
    summary: 'The scheduler\'s state for a gateway',
    responses: { 200: { description: 'state', schema: statusSchema }, ...AUTH_ERRORS, 404: { description: 'the scheduler does not serve this gateway' } },
    async handler({ params }) {
      return { body: await schedulerStatus(deps, params.gateway) };
    },
  });

  api.route<Record<string, never>, { gateway: string }>({
    method: 'delete', path, tags: ['scheduler'], security: SECURITY, before: [auth], params: gatewayParams,
    summary: 'Stop executing payments for a gateway',
    description: 'The service stops executing and settling for the gateway. The chain still names the signer until the authority changes it.',
    responses: { 200: { description: 'stopped', schema: stoppedSchema }, ...AUTH_ERRORS, 404: { description: 'the scheduler does not serve this gateway' } },
    async handler({ params }) {
      return { body: await stop(deps, params.gateway) };
    },
  });
}
