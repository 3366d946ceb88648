/**
 * The x402 `payment-identifier` extension: a client-chosen id
 * (`paymentPayload.extensions["payment-identifier"].info.id`, 16 to 128 characters of
 * [A-Za-z0-9_-]) under which a settlement's answer is kept. The same id with the same
 * payload and requirements gets the stored answer without a second settlement; the same
 * id with anything else is a 409, on every node (the entry lives in Redis). The stored
 * answer still goes out once per payer's proof (engine.pay, spent-proofs.ts): a retry re-signs.
 *
 * The entry keeps a fingerprint (SHA-256 of the payload and the requirement id) and the
 * answer. A first request takes the id with SET NX; a copy arriving meanwhile waits for
 * the answer; a failure that is not an answer (the chain unreachable) frees the id.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { conflict, invalid } from '../../src/kernel/http/errors.js';
import type { PaymentPayload } from './payload.js';

export const PAYMENT_IDENTIFIER = 'payment-identifier';
const ID = /^[A-Za-z0-9_-]{16,128}$/;

/** The payload's payment identifier; undefined without one; a 400 when it is malformed. */
export function paymentIdentifierOf(p: PaymentPayload): string | undefined {
  const ext: unknown = p.extensions?.[PAYMENT_IDENTIFIER];
  if (ext === undefined) return undefined;
  const info: unknown = typeof ext === 'object' && ext !== null ? (ext as Record<string, unknown>)['info'] : undefined;
  const id: unknown = typeof info === 'object' && info !== null ? (info as Record<string, unknown>)['id'] : undefined;
  if (typeof id !== 'string' || !ID.test(id)) {
    throw invalid('extensions["payment-identifier"].info.id must be 16 to 128 characters of letters, digits, _ and -');
  }
  return id;
}

/**
 * What identifies one payment: the transaction (or, without one, the payer) and the
 * requirement it pays. Not the proof: a retry re-signs it, and it is checked every time.
 */
export function fingerprintOf(p: PaymentPayload, requirementId: string): string {
  const what = 'payer' in p.payload ? `payer:${p.payload.payer}` : `tx:${p.payload.serializedTransaction}`;
  return createHash('sha256').update(JSON.stringify([p.scheme, p.network, p.id, requirementId, what])).digest('hex');
}

type Entry<T> = { fp: string; state: 'pending' } | { fp: string; state: 'done'; answer: T };

export interface PaymentIdentifiers {
  /** throws 409 when `id` is held by another payload (verify is read-only: it settles nothing) */
  check(scope: string, id: string, fp: string): Promise<void>;
  /** the stored answer of (id, fp), or `run()`'s, stored */
  once<T>(scope: string, id: string, fp: string, run: () => Promise<T>): Promise<T>;
}

export function createPaymentIdentifiers(opts: { redis: Redis; keyPrefix: string; ttlSeconds: number; waitMs: number; pollMs?: number }): PaymentIdentifiers {
  const key = (scope: string, id: string) => `${opts.keyPrefix}x402:pid:${scope}:${id}`;
  const read = async <T>(k: string): Promise<Entry<T> | undefined> => {
    const raw = await opts.redis.get(k);
    return raw === null ? undefined : (JSON.parse(raw) as Entry<T>);
  };
  const reused = (id: string) => conflict(`payment identifier ${id} was used for another payment`);

  return {
    async check(scope, id, fp) {
      const e = await read(key(scope, id));
      if (e && e.fp !== fp) throw reused(id);
    },
    async once<T>(scope: string, id: string, fp: string, run: () => Promise<T>): Promise<T> {
      const k = key(scope, id);
      const deadline = Date.now() + opts.waitMs;
      for (;;) {
        const won = await opts.redis.set(k, JSON.stringify({ fp, state: 'pending' }), 'EX', opts.ttlSeconds, 'NX');
        if (won === 'OK') {
          try {
            const answer = await run();
            await opts.redis.set(k, JSON.stringify({ fp, state: 'done', answer } satisfies Entry<T>), 'EX', opts.ttlSeconds);
            return answer;
          } catch (err) {
            await opts.redis.del(k);
            throw err;
          }
        }
        const e = await read<T>(k);
        if (e && e.fp !== fp) throw reused(id);
        if (e?.state === 'done') return e.answer;
        if (Date.now() > deadline) throw conflict(`the payment with identifier ${id} is still being settled; send it again shortly`);
        await new Promise((r) => setTimeout(r, opts.pollMs ?? 100));
      }
    },
  };
}
