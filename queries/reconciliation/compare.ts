/**
 * The comparison itself, a pure function of what was read: the chain (indexed
 * PaymentRecords, the transactions' own facts, the policy accounts) against the service's
 * ledgers. Every difference names its policy, the amounts on each side, the signatures
 * and one cause:
 *   in_doubt    a charge or intent sent and not resolved yet (or landed and not indexed yet)
 *   unbillable  metered usage the chain refused, with the chain's reason
 *   lost        a record the service counts as paid with no payment on chain; usage neither
 *               charged nor unbillable past its bound; prepaid draws beyond the credit
 *   duplicated  a payment signed by the service's signer that no service record names, or
 *               one the service recorded as not paid (its usage or period paid again)
 */
import type { PolicyAccount, TxFacts } from './chain.js';
import type { ChainPayment, IndexedPolicy, PrepaidDraw, ServiceRecord, UsageGap } from './ledgers.js';

export const CAUSES = ['in_doubt', 'unbillable', 'lost', 'duplicated'] as const;
export type Cause = (typeof CAUSES)[number];

export interface Difference {
  cause: Cause;
  gateway: string;
  policy: string;
  /** which ledger the difference is about: scheduler, payg, prepaid, upto, or chain (a payment no ledger names) */
  source: string;
  /** what the service's record says, smallest units (null: the record carries no amount) */
  serviceAmount: string | null;
  /** what the chain shows: the PaymentRecord's amount, else the tokens the transaction took */
  chainAmount: string | null;
  signatures: string[];
  detail: string;
}

export interface Observed {
  gateway: string;
  /** the wallet the service signs this gateway's executions with */
  signer: string | undefined;
  payments: ChainPayment[];
  records: ServiceRecord[];
  txs: Map<string, TxFacts>;
  usage: UsageGap[];
  prepaid: PrepaidDraw[];
  policies: IndexedPolicy[];
  accounts: Map<string, PolicyAccount>;
  /** the indexed total of each pay-as-you-go policy since its chain period started */
  periodTotals: Map<string, bigint>;
}

const PAID: Record<string, readonly string[]> = { scheduler: ['executed'], payg: ['executed'], prepaid: ['paid'], upto: ['paid'] };
const SENT: Record<string, readonly string[]> = { scheduler: ['sending'], payg: ['sending'], upto: ['sending'] };

export function compare(o: Observed): Difference[] {
  const diff = (cause: Cause, policy: string, source: string, f: Partial<Difference> & { detail: string }): Difference =>
    ({ cause, gateway: o.gateway, policy, source, serviceAmount: null, chainAmount: null, signatures: [], ...f });
  const bySignature = new Map(o.payments.map((p) => [p.signature, p]));
  const named = new Set(o.records.map((r) => r.signature));
  const out: Difference[] = [];

  for (const r of o.records) {
    const paid = bySignature.get(r.signature);
    const tx = o.txs.get(r.signature) ?? { kind: 'unseen' as const };
    const amounts = { serviceAmount: r.amount?.toString() ?? null, chainAmount: paid?.amount.toString() ?? (tx.kind === 'landed' ? tx.taken.toString() : null), signatures: [r.signature] };
    if (SENT[r.source]?.includes(r.status)) {
      out.push(diff('in_doubt', r.policy, r.source, { ...amounts, detail: `${r.source} record ${r.id} was sent and is not resolved yet (${tx.kind} on chain)` }));
    } else if (PAID[r.source]?.includes(r.status)) {
      if (paid) continue;
      out.push(tx.kind === 'landed'
        ? diff('in_doubt', r.policy, r.source, { ...amounts, detail: `${r.source} record ${r.id} landed at slot ${tx.slot} and is not indexed yet` })
        : diff('lost', r.policy, r.source, { ...amounts, detail: `${r.source} record ${r.id} counts as paid; the chain has ${tx.kind === 'failed' ? `it failed: ${tx.err}` : 'no such transaction'}` }));
    } else if (paid) {
      out.push(diff('duplicated', r.policy, r.source, { ...amounts, detail: `the chain paid the transaction of ${r.source} record ${r.id}, which the service holds as ${r.status}: what it paid for is paid again` }));
    }
  }

  for (const p of o.payments) {
    if (named.has(p.signature)) continue;
    const tx = o.txs.get(p.signature);
    if (o.signer === undefined || tx?.kind !== 'landed' || tx.feePayer !== o.signer) continue; // the payer's own transaction
    out.push(diff('duplicated', p.policy, 'chain', {
      chainAmount: p.amount.toString(), signatures: [p.signature],
      detail: `PaymentRecord ${p.recordId} was signed by the service's signer ${o.signer} and no service record names it`,
    }));
  }

  for (const u of o.usage) {
    out.push(u.kind === 'unbillable'
      ? diff('unbillable', u.policy, 'payg', { serviceAmount: u.amount.toString(), detail: `${u.requests} metered requests refused by the chain: ${u.reason}` })
      : diff('lost', u.policy, 'payg', { serviceAmount: u.amount.toString(), detail: `${u.requests} metered requests neither charged nor unbillable since ${new Date(u.oldest * 1000).toISOString()}` }));
  }

  for (const c of o.prepaid) {
    if (c.drawn > c.credit) out.push(diff('lost', c.policy, 'prepaid', { serviceAmount: c.drawn.toString(), chainAmount: c.credit.toString(), signatures: c.transaction ? [c.transaction] : [], detail: `drawn ${c.drawn} on a credit of ${c.credit}` }));
  }

  for (const p of o.policies) out.push(...accountDifferences(o, p, diff));
  return out;
}

type Make = (cause: Cause, policy: string, source: string, f: Partial<Difference> & { detail: string }) => Difference;

/** The policy account against the indexed PaymentRecords: a count or period total the index does not explain. */
function accountDifferences(o: Observed, p: IndexedPolicy, diff: Make): Difference[] {
  const acc = o.accounts.get(p.address);
  if (!acc?.exists) return [];
  const out: Difference[] = [];
  if (acc.paymentCount > p.indexedPayments) {
    out.push(diff('in_doubt', p.address, 'chain', { detail: `the policy account's payment_count is ${acc.paymentCount}; ${p.indexedPayments} PaymentRecords are indexed` }));
  }
  const indexed = o.periodTotals.get(p.address);
  if (acc.period && indexed !== undefined && indexed !== acc.period.total) {
    out.push(diff('in_doubt', p.address, 'chain', { chainAmount: acc.period.total.toString(), serviceAmount: indexed.toString(), detail: `current_period_total is ${acc.period.total} since ${acc.period.start}; the indexed PaymentRecords of the period sum to ${indexed}` }));
  }
  return out;
}

export function countByCause(differences: readonly Difference[]): Record<Cause, number> {
  const counts = Object.fromEntries(CAUSES.map((c) => [c, 0])) as Record<Cause, number>;
  for (const d of differences) counts[d.cause] += 1;
  return counts;
}
