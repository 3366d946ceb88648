/**
 * An API node's collaborators: the process's context plus what the node builds once and
 * shares among its routes and attachments (the key ring, the gateway lookups, metrics,
 * the token catalog client).
 * Route modules and attachments take this whole; each command or query they call names
 * the few fields it uses, and the node meets every such list.
 */
import type { Server } from 'node:http';
import type { AppContext } from './context.js';
import type { Api } from '../../infra/http/routes.js';
import type { GatewayLookup } from '../kernel/auth/gateway-lookup.js';
import type { ApiKeyLookup } from '../kernel/auth/api-key-lookup.js';
import { ownerOfApiKey } from '../../commands/api-keys/store.js';
import { cachedGatewayLookup, defaultGatewayLookup } from '../../infra/auth/current-keys.js';
import { withSessionFloors } from '../../commands/gateway-auth/session-floors.js';
import { createKeyRing, type KeyRing } from '../../infra/signing-keys/key-ring.js';
import { createMetrics, type Metrics } from '../../infra/metrics/metrics.js';
import { createRpcClient, type RpcClient } from '../../infra/solana/rpc-client.js';
import type { X402Deps } from '../../commands/x402/engine.js';
import { x402DepsOf } from './x402-deps.js';
import type { AssetDeps } from '../../queries/assets/lookup.js';
import { createSharedCache } from '../../infra/upstream/shared-cache.js';
import { createTokenCatalog } from '../../infra/upstream/token-catalog.js';
import { createSecretsMonitor, type SecretsMonitor } from './secrets.js';

export interface AppNode extends AppContext {
  /** signs and verifies our JWTs; one cache and one rotation subscriber per node */
  keyRing: KeyRing;
  /** who may sign in for a gateway: the chain first, the read model second, asked each time */
  gatewayLookup: GatewayLookup;
  /** the same answers kept for GATEWAY_KEYS_CACHE_MS: checks gateway JWTs at use */
  gatewayKeys: GatewayLookup;
  metrics: Metrics;
  /** who a gateway API key acts for (undefined: unknown or revoked), asked each time */
  apiKeys: ApiKeyLookup;
  /** the configured chain's JSON-RPC (SOLANA_RPC_URL, SOLANA_RPC_TIMEOUT_MS) */
  rpc: RpcClient;
  /** the x402 middleware's collaborators: the demo resource and the facilitator share them */
  x402: X402Deps;
  /**
   * the token catalog client and the caches shared by every node: the asset routes and
   * pool search use this one client, so one circuit breaker opens for both on an outage
   */
  assets: AssetDeps;
  /** the secrets this node opens: checked (and plaintext ones sealed) at start, reported by health */
  secrets: SecretsMonitor;
}

/** An area's routes, registered on the node's Api (route-modules.ts lists them). */
export type RouteModule = (api: Api, node: AppNode) => void;

/** Something that attaches to the node's raw HTTP server besides express (Socket.IO, the pools sync). */
export type ServerAttachment = (server: Server, node: AppNode) => Promise<{ close(): Promise<void> }>;

/**
 * Builds the node's shared collaborators once. The key ring refuses to start without
 * SIGNING_KEY_ENCRYPTION_KEY outside development mode.
 */
export function buildNode(ctx: AppContext): AppNode {
  const { solana } = ctx.config;
  const rpc = createRpcClient({ url: solana.rpcUrl, timeoutMs: solana.rpcTimeoutMs });
  const keyRing = createKeyRing(ctx);
  const gatewayLookup = defaultGatewayLookup({ ...ctx, rpc });
  return {
    ...ctx,
    metrics: ctx.metrics ?? createMetrics(),
    rpc,
    keyRing,
    secrets: createSecretsMonitor(ctx, keyRing),
    x402: x402DepsOf(ctx, rpc, keyRing),
    assets: assetDepsOf(ctx),
    gatewayLookup,
    apiKeys: (presented) => ownerOfApiKey(ctx.db, presented),
    gatewayKeys: cachedGatewayLookup(withSessionFloors(gatewayLookup, ctx.db), ctx.config.keys.gatewayKeysCacheMs, () => ctx.clock.now()),
  };
}

/** The catalog client (TOKENS_API_URL, its key, the upstream timeout and breaker settings) and the Redis cache. */
function assetDepsOf(ctx: AppContext): AssetDeps {
  const u = ctx.config.upstream;
  return {
    catalog: createTokenCatalog({
      baseUrl: u.tokensApiUrl,
      apiKey: u.tokensApiKey,
      timeoutMs: u.timeoutMs,
      logger: ctx.logger,
      breaker: { resetTimeoutMs: u.breakerResetMs },
    }),
    cache: createSharedCache(ctx.redis, ctx.config.redis.prefix),
    logger: ctx.logger,
  };
}
