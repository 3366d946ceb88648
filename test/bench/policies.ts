/**
 * Policy API benches: GET /v1/subscriptions?gatewayPublicKey=… and
 * GET /v1/payment-policies/{address}/executions at 50 connections over read models of
 * 100,000 policies and 1,000,000 payments, each against pgbench running the very SQL the
 * route runs (compiled from the same kysely builder) at the same concurrency.
 * Data: 20 gateways, 80% of user payments in the default stablecoin, the five variants
 * in turn; 20% of payments on 1,000 long-lived policies (200 each), the rest spread evenly.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { sql, type Compilable } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { resolveFilters } from '../../queries/policies/filters.js';
import { policiesQuery } from '../../queries/policies/policy-rows.js';
import { executionsQuery } from '../../queries/policies/executions.js';
import { policyDoc } from '../../projections/policies/doc.js';
import type { Json } from '../../src/kernel/events/codec.js';
import { httpLoad, routeVsPgbench, timed } from './harness.js';

const POLICIES = Number(process.env['BENCH_POLICIES'] ?? 100_000);
const PAYMENTS = Number(process.env['BENCH_PAYMENTS'] ?? 1_000_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const GATEWAYS = 20;
const HOT = 1000;
/** the variants a seeded policy takes in turn, and each one's policy_type at seed index i */
export const VARIANTS = ['Subscription', 'OneTime', 'Subscription', 'Milestone', 'PayAsYouGo', 'UpTo'] as const;
const key = (): string => bs58.encode(randomBytes(32));

export function policyType(variant: (typeof VARIANTS)[number], i: number): Record<string, unknown> {
  const t = String(1_700_000_000 + i);
  switch (variant) {
    case 'Subscription': return { kind: variant, amount: '10000000', auto_renew: true, max_renewals: null, payment_frequency: 'Monthly', next_payment_due: t };
    case 'OneTime': return { kind: variant, amount: '5000000', due_date: t, expiry_date: null };
    case 'Milestone': return { kind: variant, milestone_amounts: ['1', '2', '3', '0'], milestone_timestamps: [t, t, t, '0'], current_milestone: 1, release_condition: 0, total_milestones: 3, escrow_amount: '5' };
    case 'PayAsYouGo': return { kind: variant, max_amount_per_period: '1000', max_chunk_amount: '100', period_length_seconds: '86400', current_period_start: t, current_period_total: '0', expiry_date: null };
    case 'UpTo': return { kind: variant, max_amount: '777', valid_after: t, deadline: t };
  }
}

async function seed(env: TestEnv, defaultMint: string): Promise<{ gateway: string; hotPolicy: string }> {
  const gateways = Array.from({ length: GATEWAYS }, key);
  const other = key();
  const rows = [];
  for (let i = 0; i < POLICIES; i += 1) {
    const variant = VARIANTS[i % VARIANTS.length]!;
    const memo = Buffer.alloc(64);
    memo.write(`order-${i}`);
    const row = {
      address: key(), policy_id: 1 + (i % 7), user_payment: key(), owner: key(), token_mint: i % 5 === 4 ? other : defaultMint,
      gateway: gateways[i % GATEWAYS]!, recipient: key(), variant, policy_type: JSON.stringify(policyType(variant, i)), memo,
      tracking_id: `order-${i}`, status: 'Active', total_paid: '0', total_output: null, extra: null, payment_count: 0,
      last_payment_at: null, last_payment_signature: null, next_payment_due: String(1_700_000_000 + i), created_at: 1_700_000_000 + i,
      updated_at: 1_700_000_000 + i, created_slot: 1000 + i, created_signature: 'x', deleted: false, deleted_at: null,
    };
    rows.push({ ...row, doc: policyDoc('payment', { ...row, policy_id: String(row.policy_id), created_at: String(row.created_at), created_slot: String(row.created_slot), updated_at: String(row.updated_at), policy_type: JSON.parse(row.policy_type) as Json }) });
    if (rows.length === 2000) { await env.db.insertInto('payment_policies').values(rows.splice(0)).execute(); }
  }
  if (rows.length > 0) await env.db.insertInto('payment_policies').values(rows).execute();
  await sql`CREATE TABLE bench_pidx AS SELECT row_number() OVER (ORDER BY created_slot) AS i, address, gateway, recipient, token_mint, memo, tracking_id FROM payment_policies`.execute(env.db);
  await sql`CREATE UNIQUE INDEX ON bench_pidx (i)`.execute(env.db);
  await sql`
    INSERT INTO payments (event_id, kind, policy, gateway, signature, slot, event_index, block_time, timestamp, at, amount,
      payer, recipient, token_mint, record_id, memo, tracking_id, doc)
    SELECT 'sig' || g || ':0:0', 'PaymentRecord', p.address, p.gateway, 'sig' || g, 2000 + g, 0, 1700000000 + g, 1700000000 + g,
      1700000000 + g, 1000000 + g % 1000, p.address, p.recipient, p.token_mint, g, p.memo, p.tracking_id,
      -- the stored API event, of the real one's shape and size
      json_build_object('id', 'sig' || g || ':0:0', 'name', 'PaymentRecord', 'signature', 'sig' || g, 'slot', 2000 + g,
        'blockTime', 1700000000 + g, 'timestamp', to_char(to_timestamp(1700000000 + g) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"'),
        'ixPath', '0', 'index', 0, 'data', json_build_object('payment_policy', p.address, 'gateway', p.gateway,
          'amount', (1000000 + g % 1000)::text, 'timestamp', (1700000000 + g)::text, 'memo', p.tracking_id, 'memo_hex', encode(p.memo, 'hex'),
          'record_id', g, 'payer', p.address, 'recipient', p.recipient, 'token_mint', p.token_mint), 'trackingId', p.tracking_id)::text
    FROM generate_series(0, ${PAYMENTS - 1}::int) g
    JOIN bench_pidx p ON p.i = CASE WHEN g < ${PAYMENTS / 5}::int THEN (g % ${HOT}) + 1 ELSE (g % ${POLICIES}) + 1 END`.execute(env.db);
  const hot = await sql<{ address: string }>`SELECT address FROM bench_pidx WHERE i = 1`.execute(env.db);
  await sql`DROP TABLE bench_pidx`.execute(env.db);
  await sql`VACUUM ANALYZE payment_policies`.execute(env.db);
  await sql`VACUUM ANALYZE payments`.execute(env.db);
  return { gateway: gateways[0]!, hotPolicy: hot.rows[0]!.address };
}

/** The compiled SQL of a kysely query with its parameters inlined, for pgbench. */
function inlined(q: Compilable): string {
  const c = q.compile();
  return c.sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const v = c.parameters[Number(n) - 1];
    return typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`;
  });
}

export async function benchPolicies(): Promise<void> {
  process.stdout.write(`policies: ${POLICIES} policies, ${PAYMENTS} payments\n`);
  const env = await createTestEnv('bench_policies');
  try {
    const config = loadConfig({ ...env.env, LOG_LEVEL: 'silent' });
    const defaultMint = config.solana.defaultStablecoin;
    const seeded = await timed(() => seed(env, defaultMint));
    process.stdout.write(`  seeded in ${(seeded.ms / 1000).toFixed(1)} s\n`);
    const { gateway, hotPolicy } = seeded.result;
    const api = await startTestApi(env, { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000' });
    const uncached = await startTestApi(env, { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000', READ_CACHE_TTL_MS: '0' });
    const filter = resolveFilters({ gatewayPublicKey: gateway }, 'subscriptions', { defaultMint, pda: createPdaDeriver(PROGRAM_ID) });
    const cases = [
      { name: 'GET /v1/subscriptions?gatewayPublicKey=…', model: 'payment-policies', url: `/v1/subscriptions?gatewayPublicKey=${gateway}`, sql: inlined(policiesQuery(env.db, 'payment', filter, { limit: 100, offset: 0 })) },
      { name: 'GET /v1/payment-policies/{address}/executions', model: 'payments', url: `/v1/payment-policies/${hotPolicy}/executions`, sql: inlined(executionsQuery(env.db, 'payment', hotPolicy, { limit: 100, offset: 0 })) },
    ];
    for (const c of cases) {
      const warm = await fetch(`${api.url}${c.url}`);
      const body = (await warm.json()) as { data?: unknown[]; error?: string };
      if (!body.data) throw new Error(`${c.url}: ${warm.status} ${body.error}`);
      await routeVsPgbench({
        name: `${c.name} (${body.data.length} items)`, url: `${api.url}${c.url}`, uncachedUrl: `${uncached.url}${c.url}`, seconds: SECONDS, goal: 0.5,
        sql: c.sql, dbUrl: env.dbUrl, redis: env.redis, keys: env.keys, readModel: c.model,
      });
    }
    // context for the ratios: what this node serves on a route that does no work at all
    const floor = await httpLoad(`${api.url}/v1/health`, 50, SECONDS);
    process.stdout.write(`  (this API node's ceiling: GET /v1/health @50 conns ${floor.rps.toFixed(0)} req/s, p99 ${floor.p99} ms)\n`);
    await uncached.close();
    await api.close();
  } finally {
    await env.close();
  }
}
