/**
 * The gateway's keys as they are now, for checking gateway JWTs at use: a token names the
 * wallet that signed in (`signer`), and it is honoured only while that wallet is still the
 * gateway's authority or signer and the gateway is active. Answers are kept per node for
 * GATEWAY_KEYS_CACHE_MS (5 s), so a changed signer locks its tokens out within that,
 * at the cost of one chain read per gateway per period, not one per request. The
 * composition root builds one cached lookup per API node and hands it to every route that
 * takes gateway JWTs.
 */
import type { Config } from '../../src/kernel/config/config.js';
import type { Db } from '../postgres/database.js';
import type { Logger } from '../log/logger.js';
import type { RpcClient } from '../solana/rpc-client.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import { chainFirstGatewayLookup, chainGatewayLookup, readModelGatewayLookup } from './gateway-lookups.js';
import type { GatewayKeys, GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';

export interface GatewayLookupDeps { rpc: RpcClient; config: Pick<Config, 'solana'>; dbRead: Db; logger: Logger }

/** The chain (PaymentGateway account) first; the gateways read model when the chain does not answer. */
export function defaultGatewayLookup(ctx: GatewayLookupDeps): GatewayLookup {
  const { solana } = ctx.config;
  const chain = chainGatewayLookup(ctx.rpc, { programId: solana.programId, commitment: solana.commitment });
  return chainFirstGatewayLookup(chain, readModelGatewayLookup(ctx.dbRead), ctx.logger);
}

export function cachedGatewayLookup(lookup: GatewayLookup, ttlMs: number, now: () => number, capacity = 10_000): GatewayLookup {
  const cache = createLru<string, { at: number; keys: GatewayKeys | undefined }>(capacity);
  return async (address) => {
    const hit = cache.get(address);
    if (hit && now() - hit.at < ttlMs) return hit.keys;
    const at = now();
    const keys = await lookup(address);
    cache.set(address, { at, keys });
    return keys;
  };
}
