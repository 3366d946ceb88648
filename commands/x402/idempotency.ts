/**
 * One settlement per transaction, across every node: the transaction's signature (its id
 * on chain) keys a Redis entry. The first request takes a lease (SET NX PX) and settles;
 * a copy arriving meanwhile waits for the lease holder's result; a copy arriving later
 * reads the stored result. The same payment sent twice thus creates one policy, whichever
 * node it reaches; its answer goes out once per payer's proof (spent-proofs.ts), so the
 * payer's repeat signs a fresh proof and a copy of the header gets nothing.
 *
 * A settlement that fails frees the lease, so the same header can be retried: a refusal
 * is deterministic and is simply refused again, and a transaction the chain already
 * processed is recognized at send and confirmed (settle.ts).
 */
import type { Redis } from 'ioredis';
import { conflict } from '../../src/kernel/http/errors.js';
import { x402PaymentKey } from '../../src/kernel/names/index.js';

export interface SettledResult {
  /** the Payment-Response header value */
  paymentResponse: string;
  body: { jwt: string; message: string };
  /** the facts of the settlement (the facilitator answers them; absent from results stored by older nodes) */
  payer?: string;
  policy?: string;
  /** the signature sent, absent when an existing policy served */
  transaction?: string;
  /** unix seconds at which the JWT expires */
  expiresAt?: number;
}

type Entry = { state: 'pending' } | { state: 'done'; result: SettledResult };

export interface Idempotency {
  /** the stored or awaited result of `signature`, or the result of running `settle` as its owner */
  once(signature: string, settle: () => Promise<SettledResult>): Promise<SettledResult>;
}

export function createIdempotency(opts: {
  redis: Redis; keyPrefix: string; leaseMs: number; ttlSeconds: number; pollMs?: number;
}): Idempotency {
  const key = (sig: string) => x402PaymentKey(opts.keyPrefix, sig);
  const poll = opts.pollMs ?? 100;
  const read = async (k: string): Promise<Entry | undefined> => {
    const raw = await opts.redis.get(k);
    return raw === null ? undefined : (JSON.parse(raw) as Entry);
  };

  return {
    async once(signature, settle) {
      const k = key(signature);
      // a waiter gives up after two leases: the owner either finished or its lease expired
      const deadline = Date.now() + 2 * opts.leaseMs;
      for (;;) {
        const entry = await read(k);
        if (entry?.state === 'done') return entry.result;
        if (!entry) {
          const won = await opts.redis.set(k, JSON.stringify({ state: 'pending' }), 'PX', opts.leaseMs, 'NX');
          if (won === 'OK') {
            try {
              const result = await settle();
              await opts.redis.set(k, JSON.stringify({ state: 'done', result } satisfies Entry), 'EX', opts.ttlSeconds);
              return result;
            } catch (err) {
              await opts.redis.del(k);
              throw err;
            }
          }
          continue;
        }
        if (Date.now() > deadline) throw conflict(`the settlement of transaction ${signature} is still in progress; send the same Payment header again shortly`);
        await new Promise((r) => setTimeout(r, poll));
      }
    },
  };
}
