/**
 * One settlement in flight per source token account, across nodes. Each payment passes
 * simulation alone: a payer funded for one price could sign K payments and send them at
 * once, every one would be sent, and the K-1 that fail on chain would each cost the
 * service's fee payer its fee. A Redis lease on the transfer's source account, taken before
 * the send and held until the payment's fate is known (settled, failed, refused before
 * sending), makes another payment from that account wait for it (then its own simulation
 * sees what is left) or be refused. A payment left in doubt keeps the lease until its fate is
 * known or the lease expires: its expiry outlives the confirmation timeout and a blockhash's
 * life, so a node that died holding it frees it by itself.
 */
import type { Redis } from 'ioredis';
import { getCompiledTransactionMessageDecoder } from '@solana/kit';
import { TOKEN_2022_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from '@x402/svm';
import { x402ExactSourceKey } from '../../../src/kernel/names/index.js';
import type { Decoded } from './in-doubt.js';

/** TransferChecked's instruction tag; its accounts are [source, mint, destination, authority]. */
const TRANSFER_CHECKED = 12;

/** The source token account of the payment's TransferChecked, or undefined when it has none (the package refuses it). */
export function sourceAccountOf(tx: Decoded): string | undefined {
  const m = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  for (const ix of m.instructions) {
    const program = m.staticAccounts[ix.programAddressIndex];
    if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) continue;
    const source = ix.accountIndices?.[0];
    if (ix.data?.[0] === TRANSFER_CHECKED && source !== undefined) return m.staticAccounts[source];
  }
  return undefined;
}

/**
 * KEYS[1] the source account's lease; ARGV[1] the message hash of the payment that holds it.
 * Deletes the lease only when that payment holds it (an expired lease taken by another
 * payment is not freed by the first one's late answer).
 */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export interface SourceLeases {
  /**
   * Takes the lease of `source` for the payment `messageHash`, waiting up to waitMs while
   * another payment holds it; true when held (also when this payment held it already).
   */
  acquire(source: string, messageHash: string): Promise<boolean>;
  /** Frees the lease when `messageHash` holds it: that payment's fate is known. */
  release(source: string, messageHash: string): Promise<void>;
}

export function createSourceLeases(opts: { redis: Redis; keyPrefix: string; leaseMs: number; waitMs: number; pollMs?: number }): SourceLeases {
  const key = (source: string) => x402ExactSourceKey(opts.keyPrefix, source);
  const poll = opts.pollMs ?? 100;
  return {
    async acquire(source, messageHash) {
      const k = key(source);
      const deadline = Date.now() + opts.waitMs;
      for (;;) {
        if ((await opts.redis.set(k, messageHash, 'PX', opts.leaseMs, 'NX')) === 'OK') return true;
        // the same payment again (its retry after an answer lost): its own lease
        if ((await opts.redis.get(k)) === messageHash) return true;
        if (Date.now() > deadline) return false;
        await new Promise((r) => setTimeout(r, poll));
      }
    },
    async release(source, messageHash) {
      await opts.redis.eval(RELEASE, 1, key(source), messageHash);
    },
  };
}
