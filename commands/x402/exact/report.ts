/**
 * The fee payers and their SOL, as `tributary status` prints them and /metrics exports
 * them: every key that may still hold SOL, active first. A balance below
 * X402_EXACT_FEE_PAYER_MIN_LAMPORTS is a warning: the next exact settlements would fail on
 * fees. A balance the chain does not answer is unknown, never zero.
 */
import type { Db } from '../../../infra/postgres/database.js';
import { RpcResponseError, type RpcClient } from '../../../infra/solana/rpc-client.js';
import { listFeePayers } from './fee-payers.js';

export interface FeePayerBalance {
  network: string;
  address: string;
  active: boolean;
  retiresAt: Date | null;
  lamports: number | null;
  /** active and below the minimum */
  low: boolean;
}

export async function feePayerReport(db: Db, rpc: RpcClient | undefined, minLamports: number): Promise<FeePayerBalance[]> {
  const payers = await listFeePayers(db);
  let balances: (number | null)[] = payers.map(() => null);
  if (rpc && payers.length > 0) {
    try {
      const replies = await rpc.batch<{ value: number }>('getBalance', payers.map((p) => [p.address, { commitment: 'confirmed' }]));
      balances = replies.map((r) => (r instanceof RpcResponseError ? null : r.value));
    } catch { /* unknown balances: the report still lists the keys */ }
  }
  return payers.map((p, i) => {
    const lamports = balances[i] ?? null;
    return { ...p, lamports, low: p.active && lamports !== null && lamports < minLamports };
  });
}

export function feePayerLines(rows: readonly FeePayerBalance[]): string[] {
  if (rows.length === 0) return ['x402 exact fee payer: none yet (made on first use)'];
  return rows.map((r) => {
    const sol = r.lamports === null ? 'balance unknown' : `${(r.lamports / 1e9).toFixed(4)} SOL`;
    const state = r.active ? 'active' : `retiring ${r.retiresAt?.toISOString() ?? ''}`;
    return `${r.low ? 'WARNING ' : ''}x402 exact fee payer ${r.network} ${r.address} ${state} ${sol}${r.low ? ' (below X402_EXACT_FEE_PAYER_MIN_LAMPORTS: exact settlements will fail on fees)' : ''}`;
  });
}
