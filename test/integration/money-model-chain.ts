/**
 * What the chain itself says about a money-model run, read from the localnet's events (each
 * with its block time, the program's clock): the policies created at the gateway, their
 * PaymentRecords, and the intervals in which each was paused or deleted.
 */
import { PublicKey } from '@solana/web3.js';
import { pdas } from '../../infra/localnet/keys.js';
import type { Localnet } from '../../infra/localnet/index.js';

export interface ChainRecord { policy: string; amount: bigint; recordId: number; signature: string; at: number }
export interface ChainPolicy {
  address: string; kind: string; userPayment: string; createdAt: number;
  /** Subscription: the first next_payment_due and its step in seconds */
  due?: number; step?: number;
  records: ChainRecord[];
  /** unix seconds (block times): paused [from, to), deleted from `from` on */
  halted: { what: 'paused' | 'deleted'; from: number; to?: number }[];
}

type Data = Record<string, unknown>;

export function chainView(ln: Localnet, gateway: string): Map<string, ChainPolicy> {
  const out = new Map<string, ChainPolicy>();
  for (const e of ln.ledger()) {
    const d = e.data as unknown as Data;
    const at = e.blockTime ?? 0;
    if (e.name === 'PaymentPolicyCreated' && d['gateway'] === gateway) {
      const t = d['policy_type'] as Data;
      const address = pdas.paymentPolicy(new PublicKey(d['user_payment'] as string), Number(d['policy_id'])).toBase58();
      const freq = t['payment_frequency'];
      const step = typeof freq === 'object' && freq !== null && 'value' in freq ? Number((freq as Data)['value']) : undefined;
      out.set(address, {
        address, kind: String(t['kind']), userPayment: d['user_payment'] as string, createdAt: at, records: [], halted: [],
        ...(t['kind'] === 'Subscription' ? { due: Number(t['next_payment_due']), ...(step ? { step } : {}) } : {}),
      });
      continue;
    }
    const p = out.get(d['payment_policy'] as string);
    if (!p) continue;
    if (e.name === 'PaymentRecord') {
      p.records.push({ policy: p.address, amount: BigInt(d['amount'] as string), recordId: Number(d['record_id']), signature: e.signature, at });
    } else if (e.name === 'PaymentPolicyStatusChanged') {
      if (d['new_status'] === 'Paused') p.halted.push({ what: 'paused', from: at });
      else for (const h of p.halted) if (h.what === 'paused' && h.to === undefined) h.to = at;
    } else if (e.name === 'PaymentPolicyDeleted') {
      p.halted.push({ what: 'deleted', from: at });
    }
  }
  return out;
}
