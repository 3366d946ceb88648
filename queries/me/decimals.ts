/**
 * A mint's decimals for the payer's lists, read from the chain once per node (a mint's
 * decimals never change) and kept in a bounded LRU. Undefined when the chain cannot say
 * now: the lists still answer, with the amounts in base units alone.
 */
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import { readMintDecimals } from '../../infra/solana/mint.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import { formatBaseUnits } from '../skill/amount.js';

export type DecimalsOf = (mint: string | null) => Promise<number | undefined>;

export function mintDecimalsReader(rpc: RpcClient, commitment: string): DecimalsOf {
  const known = createLru<string, number>(10_000);
  return async (mint) => {
    if (mint === null) return undefined;
    const hit = known.get(mint);
    if (hit !== undefined) return hit;
    try {
      const decimals = await readMintDecimals(rpc, mint, commitment);
      known.set(mint, decimals);
      return decimals;
    } catch {
      return undefined;
    }
  };
}

/** "1.5" for 1500000 with 6 decimals; null without decimals or a number. */
export function display(units: string | null | undefined, decimals: number | undefined): string | null {
  if (decimals === undefined || units === null || units === undefined || !/^[0-9]+$/.test(units)) return null;
  return formatBaseUnits(BigInt(units), decimals);
}
