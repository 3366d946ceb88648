/**
 * Loads what a batch of the merchant model touches and writes back what the fold
 * changed, in the runner's transaction. Writes are chunked multi-row upserts; revenue
 * and subscriber payment totals are added (addition commutes), the rest is replaced.
 */
import { sql } from 'kysely';
import type { Trx } from '../runner/projection.js';
import type { PolicyStatus } from '../../src/kernel/domain/policy-type.js';
import type { FoldOut, MerchantState, MPolicy } from './fold.js';
import { pairKey, type BatchNeeds } from './needs.js';

const CHUNK = 1000;

async function chunked<T>(items: readonly T[], f: (chunk: T[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CHUNK) await f(items.slice(i, i + CHUNK));
}

export async function loadState(trx: Trx, needs: BatchNeeds): Promise<MerchantState> {
  const state: MerchantState = { protocolShareBps: null, gateways: new Map(), userPayments: new Map(), policies: new Map(), mrr: new Map() };
  const program = await trx.selectFrom('merchant_program').select('protocol_share_bps').where('id', '=', 1).executeTakeFirst();
  state.protocolShareBps = program?.protocol_share_bps ?? null;
  await chunked([...needs.gateways], async (c) => {
    for (const g of await trx.selectFrom('merchant_gateways').selectAll().where('gateway', 'in', c).execute()) {
      state.gateways.set(g.gateway, { gatewayFeeBps: g.fee_bps, netMode: g.net_mode, customProtocolShareBps: g.custom_protocol_share_bps });
    }
  });
  await chunked([...needs.userPayments], async (c) => {
    for (const u of await trx.selectFrom('merchant_user_payments').selectAll().where('user_payment', 'in', c).execute()) {
      state.userPayments.set(u.user_payment, { owner: u.owner, token_mint: u.token_mint });
    }
  });
  await chunked([...needs.policies], async (c) => {
    for (const p of await trx.selectFrom('merchant_policies').selectAll().where('address', 'in', c).execute()) {
      state.policies.set(p.address, { ...p, status: p.status as PolicyStatus, monthly_micro: BigInt(p.monthly_micro) });
    }
  });
  const pairs0 = new Map<string, [string, string]>();
  // policies waiting for a user payment the batch creates
  const created = [...needs.batchMints.keys()];
  await chunked(created, async (c) => {
    for (const p of await trx.selectFrom('merchant_policies').selectAll().where('user_payment', 'in', c).where('token_mint', 'is', null).execute()) {
      state.policies.set(p.address, { ...p, status: p.status as PolicyStatus, monthly_micro: BigInt(p.monthly_micro) });
    }
  });
  for (const [up, mint] of needs.batchMints) {
    for (const p of state.policies.values()) if (p.user_payment === up && p.token_mint === null) pairs0.set(pairKey(p.gateway, mint), [p.gateway, mint]);
  }
  // the running MRR of every gateway and mint the batch may move
  const pairs = new Map([...needs.pairs, ...pairs0]);
  for (const p of state.policies.values()) {
    if (p.token_mint !== null) pairs.set(pairKey(p.gateway, p.token_mint), [p.gateway, p.token_mint]);
    // a policy whose user payment is unknown takes the mint of its payments
    else for (const mint of needs.paidMints.get(p.address) ?? []) pairs.set(pairKey(p.gateway, mint), [p.gateway, mint]);
  }
  for (const [gateway, up] of needs.creations) {
    const mint = state.userPayments.get(up)?.token_mint ?? needs.batchMints.get(up);
    if (mint !== undefined) pairs.set(pairKey(gateway, mint), [gateway, mint]);
  }
  await loadMrr(trx, state, [...pairs.values()]);
  return state;
}

/** The running MRR of each pair, 0 for a pair without a row: a pair absent from state.mrr was not loaded. */
async function loadMrr(trx: Trx, state: MerchantState, pairs: readonly [string, string][]): Promise<void> {
  for (const [gateway, mint] of pairs) state.mrr.set(pairKey(gateway, mint), 0n);
  await chunked(pairs, async (c) => {
    const rows = await trx.selectFrom('merchant_mrr').selectAll()
      .where(sql<boolean>`(gateway, token_mint) IN (SELECT * FROM unnest(${c.map((p) => p[0])}::text[], ${c.map((p) => p[1])}::text[]))`)
      .execute();
    for (const r of rows) state.mrr.set(pairKey(r.gateway, r.token_mint), BigInt(r.mrr_micro));
  });
}

const policyRow = (p: MPolicy) => ({
  ...p, policy_type: JSON.stringify(p.policy_type), monthly_micro: p.monthly_micro.toString(),
});

export async function saveState(trx: Trx, state: MerchantState, out: FoldOut): Promise<void> {
  if (out.programChanged && state.protocolShareBps !== null) {
    await trx.insertInto('merchant_program').values({ id: 1, protocol_share_bps: state.protocolShareBps })
      .onConflict((oc) => oc.column('id').doUpdateSet({ protocol_share_bps: state.protocolShareBps! })).execute();
  }
  await chunked([...out.gatewaysChanged], (c) => trx.insertInto('merchant_gateways')
    .values(c.map((g) => {
      const s = state.gateways.get(g)!;
      return { gateway: g, fee_bps: s.gatewayFeeBps, net_mode: s.netMode, custom_protocol_share_bps: s.customProtocolShareBps };
    }))
    .onConflict((oc) => oc.column('gateway').doUpdateSet({
      fee_bps: sql`excluded.fee_bps`, net_mode: sql`excluded.net_mode`, custom_protocol_share_bps: sql`excluded.custom_protocol_share_bps`,
    })).execute());
  await chunked([...out.newUserPayments], (c) => trx.insertInto('merchant_user_payments')
    .values(c.map((u) => ({ user_payment: u, ...state.userPayments.get(u)! })))
    .onConflict((oc) => oc.column('user_payment').doNothing()).execute());
  await chunked([...out.policiesChanged], (c) => trx.insertInto('merchant_policies')
    .values(c.map((a) => policyRow(state.policies.get(a)!)))
    // the whole row: a reused address names a new policy, perhaps at another gateway
    .onConflict((oc) => oc.column('address').doUpdateSet({
      gateway: sql`excluded.gateway`, user_payment: sql`excluded.user_payment`, payer: sql`excluded.payer`, token_mint: sql`excluded.token_mint`, policy_type: sql`excluded.policy_type`,
      status: sql`excluded.status`, deleted: sql`excluded.deleted`, ended: sql`excluded.ended`, counted: sql`excluded.counted`,
      monthly_micro: sql`excluded.monthly_micro`, next_due: sql`excluded.next_due`, created_at: sql`excluded.created_at`,
    })).execute());
  await chunked([...out.mrrChanged], (c) => trx.insertInto('merchant_mrr')
    .values(c.map((k) => {
      const [gateway, token_mint] = k.split('|') as [string, string];
      return { gateway, token_mint, mrr_micro: (state.mrr.get(k) ?? 0n).toString() };
    }))
    .onConflict((oc) => oc.columns(['gateway', 'token_mint']).doUpdateSet({ mrr_micro: sql`excluded.mrr_micro` })).execute());
  await chunked([...out.revenue.values()], (c) => trx.insertInto('merchant_revenue')
    .values(c.map((r) => ({
      ...r, gross: r.gross.toString(), gateway_fee: r.gateway_fee.toString(), protocol_fee: r.protocol_fee.toString(),
      net: r.net.toString(), mrr_micro: r.mrr_micro.toString(),
    })))
    .onConflict((oc) => oc.columns(['gateway', 'bucket', 'token_mint', 'bucket_start']).doUpdateSet({
      gross: sql`merchant_revenue.gross + excluded.gross`,
      gateway_fee: sql`merchant_revenue.gateway_fee + excluded.gateway_fee`,
      protocol_fee: sql`merchant_revenue.protocol_fee + excluded.protocol_fee`,
      net: sql`merchant_revenue.net + excluded.net`,
      payments: sql`merchant_revenue.payments + excluded.payments`,
      new_subscriptions: sql`merchant_revenue.new_subscriptions + excluded.new_subscriptions`,
      ended_subscriptions: sql`merchant_revenue.ended_subscriptions + excluded.ended_subscriptions`,
      mrr_micro: sql`excluded.mrr_micro`,
    })).execute());
  await saveSubscribers(trx, out);
}

async function saveSubscribers(trx: Trx, out: FoldOut): Promise<void> {
  const touched = [...out.touched].map((k) => k.split('|') as [string, string, string]);
  await chunked(touched, (c) => trx.insertInto('merchant_subscribers')
    .values(c.map(([gateway, token_mint, payer]) => {
      const s = out.subscribers.get(`${gateway}|${token_mint}|${payer}`);
      return {
        gateway, token_mint, payer, total_paid: (s?.total_paid ?? 0n).toString(), payments: s?.payments ?? 0,
        first_payment_at: s?.first ?? null, last_payment_at: s?.last ?? null,
      };
    }))
    .onConflict((oc) => oc.columns(['gateway', 'payer', 'token_mint']).doUpdateSet({
      total_paid: sql`merchant_subscribers.total_paid + excluded.total_paid`,
      payments: sql`merchant_subscribers.payments + excluded.payments`,
      first_payment_at: sql`least(merchant_subscribers.first_payment_at, excluded.first_payment_at)`,
      last_payment_at: sql`greatest(merchant_subscribers.last_payment_at, excluded.last_payment_at)`,
    })).execute());
  // what the subscriber's policies say, recomputed from the policies the batch left
  await chunked(touched, (c) => sql`
    UPDATE merchant_subscribers s SET
      policies = a.policies, active_policies = a.active, next_due = a.next_due,
      status = CASE WHEN a.active > 0 THEN 'active' WHEN a.paused > 0 THEN 'paused' ELSE 'ended' END
    FROM (
      SELECT gateway, token_mint, payer,
        coalesce(array_agg(address ORDER BY address) FILTER (WHERE NOT deleted), '{}') AS policies,
        count(*) FILTER (WHERE status = 'Active' AND NOT deleted)::int AS active,
        count(*) FILTER (WHERE status = 'Paused' AND NOT deleted)::int AS paused,
        min(next_due) FILTER (WHERE status = 'Active' AND NOT deleted) AS next_due
      FROM merchant_policies
      WHERE (gateway, token_mint, payer) IN (SELECT * FROM unnest(${c.map((k) => k[0])}::text[], ${c.map((k) => k[1])}::text[], ${c.map((k) => k[2])}::text[]))
      GROUP BY gateway, token_mint, payer
    ) a
    WHERE s.gateway = a.gateway AND s.token_mint = a.token_mint AND s.payer = a.payer`.execute(trx));
  // a subscriber a reused address left with no policy row: what its deleted policy left it
  const vacated = [...out.vacated].map((k) => k.split('|') as [string, string, string]);
  await chunked(vacated, (c) => sql`
    UPDATE merchant_subscribers s SET policies = '{}', active_policies = 0, next_due = NULL, status = 'ended'
    FROM unnest(${c.map((k) => k[0])}::text[], ${c.map((k) => k[1])}::text[], ${c.map((k) => k[2])}::text[]) AS k(gateway, token_mint, payer)
    WHERE s.gateway = k.gateway AND s.token_mint = k.token_mint AND s.payer = k.payer
      AND NOT EXISTS (SELECT 1 FROM merchant_policies p WHERE p.gateway = k.gateway AND p.token_mint = k.token_mint AND p.payer = k.payer)`.execute(trx));
}
