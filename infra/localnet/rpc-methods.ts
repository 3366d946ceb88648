/**
 * The JSON-RPC method table of the localnet. Standard methods follow Solana's API; two
 * methods are NON-STANDARD and exist for tests only:
 *   - tributary_getLedger [{offset?, limit?}] → {total, offset, events}: the events the
 *     emulated program emitted, in order, with their identities (the indexer's oracle);
 *   - tributary_getState [] → counts of slots, transactions, events by name and accounts.
 */
import bs58 from 'bs58';
import type { Chain } from './chain.js';
import { deriveHash } from './keys.js';
import { PROGRAM_ID } from './constants.js';
import { idlAccounts } from '../../src/kernel/idl/index.js';
import { BLOCK_NOT_AVAILABLE, configParam, invalidParams, optionalNumber, RpcError, type Params } from './rpc-errors.js';
import { accountMethods } from './rpc-accounts.js';
import { submitMethods } from './rpc-submit.js';
import { transactionMethods } from './rpc-transactions.js';
import { rentExempt } from './program/encoding.js';
import type { Faults } from './faults.js';
import { createFaultySend } from './send-faults.js';

export type RpcMethod = (params: Params) => unknown;

/** `genesisHash`: what getGenesisHash answers (devnet's when the localnet answers as devnet); default one of the seed */
export function createRpcMethods(
  chain: Chain, extra: Record<string, RpcMethod> = {}, faults?: Faults, genesisHash = bs58.encode(deriveHash(chain.seed, 'genesis')),
): Record<string, RpcMethod> {
  const context = (): { slot: number; apiVersion: string } => ({ slot: chain.slot(), apiVersion: '2.1.21' });
  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': '2.1.21', 'feature-set': 1416569292 }),
    getSlot: () => chain.slot(),
    getBlockHeight: () => chain.slot(),
    getBlockTime: (p) => {
      const slot = p[0];
      if (typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0) throw invalidParams('slot must be a non-negative integer');
      if (slot < 1 || slot > chain.slot()) throw new RpcError(BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
      return chain.blockTime(slot);
    },
    getGenesisHash: () => genesisHash,
    getLatestBlockhash: () => ({ context: context(), value: chain.latestBlockhash() }),
    isBlockhashValid: (p) => ({ context: context(), value: typeof p[0] === 'string' && chain.blockhashSlot(p[0]) !== undefined }),
    getMinimumBalanceForRentExemption: (p) => {
      const size = p[0];
      if (typeof size !== 'number' || size < 0) throw invalidParams('data length must be a non-negative integer');
      return rentExempt(size);
    },
    getEpochInfo: () => ({
      absoluteSlot: chain.slot(), blockHeight: chain.slot(), epoch: Math.floor(chain.slot() / 432_000),
      slotIndex: chain.slot() % 432_000, slotsInEpoch: 432_000, transactionCount: chain.transactions().length,
    }),
    ...accountMethods(chain),
    ...transactionMethods(chain, faults?.on('forgetful-status') ? (sig, slot) => faults.forgets(sig, slot) : undefined),
    ...submitMethods(chain, faults && (faults.on('delayed-landing') || faults.on('lost-answer') || faults.on('send-errors'))
      ? createFaultySend(chain, faults) : undefined),
    tributary_getLedger: (p) => {
      const cfg = configParam(p, 0);
      const offset = optionalNumber(cfg, 'offset') ?? 0;
      const limit = Math.min(optionalNumber(cfg, 'limit') ?? 1000, 10_000);
      const all = chain.ledger();
      return { total: all.length, offset, events: all.slice(offset, offset + limit) };
    },
    tributary_getState: () => stateSummary(chain),
    ...extra,
  };
}

export function stateSummary(chain: Chain): Record<string, unknown> {
  const byName: Record<string, number> = {};
  for (const e of chain.ledger()) byName[e.name] = (byName[e.name] ?? 0) + 1;
  const txs = chain.transactions();
  const accounts: Record<string, number> = {};
  const discs = idlAccounts.map((a) => ({ name: a.name, disc: Buffer.from(a.discriminator) }));
  for (const [, acc] of chain.store.entries()) {
    if (acc.owner !== PROGRAM_ID.toBase58()) continue;
    const kind = discs.find((d) => acc.data.subarray(0, 8).equals(d.disc))?.name ?? 'unknown';
    accounts[kind] = (accounts[kind] ?? 0) + 1;
  }
  return {
    slot: chain.slot(),
    transactions: txs.length,
    failedTransactions: txs.filter((t) => t.err !== null).length,
    events: chain.ledger().length,
    eventsByName: byName,
    accounts,
  };
}

