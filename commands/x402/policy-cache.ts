/**
 * The bearer path's view of a policy: its account read from the chain and kept for
 * `ttlMs` in this node's memory, so a burst of requests with one JWT costs one RPC call
 * per ttl, not one per request. Concurrent misses for one address share one read.
 *
 * Staleness bound: a policy paused, completed or deleted on chain is refused by every
 * node at most `ttlMs` (X402_CACHE_MS) later. The pay-as-you-go period figures read here
 * are the chain's; what this node and the others metered since lives in Redis (metering.ts).
 */
import { readProgramAccount, type AccountRead } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import type { Clock } from '../../src/kernel/domain/clock.js';

export interface PolicyCache {
  get(address: string): Promise<AccountRead>;
  /** records a read just made (after settlement), so the first bearer request needs no RPC call */
  prime(read: AccountRead): void;
}

export function createPolicyCache(opts: {
  rpc: RpcClient; programId: string; commitment: Commitment; ttlMs: number; clock: Clock; capacity?: number;
}): PolicyCache {
  const cache = createLru<string, { at: number; read: AccountRead }>(opts.capacity ?? 50_000);
  const inflight = new Map<string, Promise<AccountRead>>();
  const fresh = (at: number) => opts.clock.now() - at < opts.ttlMs;

  return {
    async get(address) {
      const hit = cache.get(address);
      if (hit && fresh(hit.at)) return hit.read;
      const pending = inflight.get(address);
      if (pending) return pending;
      const started = opts.clock.now();
      const p = readProgramAccount(opts.rpc, address, 'PaymentPolicy', { programId: opts.programId, commitment: opts.commitment })
        .then((read) => {
          cache.set(address, { at: started, read });
          return read;
        })
        .finally(() => inflight.delete(address));
      inflight.set(address, p);
      return p;
    },
    prime(read) {
      cache.set(read.address, { at: opts.clock.now(), read });
    },
  };
}
