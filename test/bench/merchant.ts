/**
 * Merchant view benches, over the read models of one gateway with 100,000
 * policies and 1,000,000 payments (a year of them), seeded straight into the tables:
 * - GET /v1/gateway/{gateway}/merchant/revenue and /subscribers at 50 connections (admin
 *   key), as a ratio to pgbench running the very SQL the route runs at the same
 *   concurrency; read cache on with 20 commits/s of the model, and with the cache off;
 * - the CSV export of the 1,000,000 payments: rows/s, and how much this process's
 *   resident memory grew while it streamed (the API node runs in this process; curl, in
 *   another, reads the export and counts its lines).
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import bs58 from 'bs58';
import { sql, type Compilable } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { subscriberRows, subscribersQuery } from '../../queries/merchant/subscribers.js';
import { bucketStarts, revenueRowsQuery } from '../../queries/merchant/revenue.js';
import { MERCHANT_PROJECTION } from '../../projections/merchant/projection.js';
import { httpLoad, pgbench, report, timed, withCommits, type HttpLoad } from './harness.js';

const POLICIES = Number(process.env['BENCH_POLICIES'] ?? 100_000);
const PAYMENTS = Number(process.env['BENCH_PAYMENTS'] ?? 1_000_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
/** which parts run: `routes`, `export` or both (default) */
const PARTS = new Set((process.env['BENCH_MERCHANT'] ?? 'routes,export').split(','));
const PAYERS = Math.max(1, Math.floor(POLICIES / 5));
const START = 1_735_689_600; // 2025-01-01
const YEAR = 365 * 86_400;
const ADMIN = 'bench-admin';
const key = (): string => bs58.encode(randomBytes(32));

async function seed(env: TestEnv, gateway: string, mint: string): Promise<void> {
  const payers = Array.from({ length: PAYERS }, key);
  await sql`CREATE TABLE bench_payers (i int PRIMARY KEY, payer text)`.execute(env.db);
  for (let i = 0; i < payers.length; i += 5000) {
    const chunk = payers.slice(i, i + 5000);
    await sql`INSERT INTO bench_payers SELECT * FROM unnest(${chunk.map((_p, j) => i + j)}::int[], ${chunk}::text[])`.execute(env.db);
  }
  await sql`
    INSERT INTO merchant_policies (address, gateway, user_payment, payer, token_mint, policy_type, status, deleted, ended, counted, monthly_micro, next_due, created_at)
    SELECT 'pol' || g, ${gateway}, 'up' || (g % ${PAYERS}::int), p.payer, ${mint},
      jsonb_build_object('kind', 'Subscription', 'amount', '10000000', 'auto_renew', true, 'max_renewals', null, 'payment_frequency', 'Monthly', 'next_payment_due', (${START}::bigint + ${YEAR}::bigint + g)::text),
      CASE WHEN g % 10 = 0 THEN 'Paused' ELSE 'Active' END, g % 17 = 0, g % 17 = 0, g % 10 <> 0 AND g % 17 <> 0, 10000000000000, ${START}::bigint + ${YEAR}::bigint + g, ${START}::bigint + (g::bigint * ${YEAR}::bigint / ${POLICIES}::bigint)
    FROM generate_series(0, ${POLICIES - 1}::int) g JOIN bench_payers p ON p.i = g % ${PAYERS}::int`.execute(env.db);
  await sql`
    INSERT INTO payments (event_id, kind, policy, gateway, signature, slot, event_index, block_time, timestamp, at, amount, payer, recipient, token_mint, record_id, memo, tracking_id, doc)
    SELECT 'sig' || g || ':0:0', 'PaymentRecord', 'pol' || (g % ${POLICIES}::int), ${gateway}, 'sig' || g, 2000 + g, 0,
      ${START}::bigint + (g::bigint * ${YEAR}::bigint / ${PAYMENTS}::bigint), ${START}::bigint + (g::bigint * ${YEAR}::bigint / ${PAYMENTS}::bigint),
      ${START}::bigint + (g::bigint * ${YEAR}::bigint / ${PAYMENTS}::bigint), 10000000 + g % 1000, p.payer, 'recipient', ${mint}, g / ${POLICIES}::int + 1, NULL, 'order-' || (g % ${POLICIES}::int), NULL
    FROM generate_series(0, ${PAYMENTS - 1}::int) g JOIN bench_payers p ON p.i = (g % ${POLICIES}::int) % ${PAYERS}::int`.execute(env.db);
  await sql`
    INSERT INTO merchant_subscribers (gateway, token_mint, payer, policies, active_policies, status, total_paid, payments, first_payment_at, last_payment_at, next_due)
    SELECT ${gateway}, ${mint}, payer, coalesce(array_agg(address ORDER BY address) FILTER (WHERE NOT deleted), '{}'),
      count(*) FILTER (WHERE status = 'Active' AND NOT deleted), CASE WHEN count(*) FILTER (WHERE status = 'Active' AND NOT deleted) > 0 THEN 'active' ELSE 'paused' END,
      0, 0, NULL, NULL, min(next_due) FILTER (WHERE status = 'Active' AND NOT deleted)
    FROM merchant_policies GROUP BY payer`.execute(env.db);
  await sql`
    UPDATE merchant_subscribers s SET total_paid = a.total, payments = a.n, first_payment_at = a.first, last_payment_at = a.last
    FROM (SELECT payer, sum(amount) AS total, count(*) AS n, min(at) AS first, max(at) AS last FROM payments GROUP BY payer) a WHERE a.payer = s.payer`.execute(env.db);
  for (const [bucket, trunc] of [['day', 'day'], ['week', 'week'], ['month', 'month']] as const) {
    await sql`
      INSERT INTO merchant_revenue (gateway, token_mint, bucket, bucket_start, gross, gateway_fee, protocol_fee, net, payments, new_subscriptions, ended_subscriptions, mrr_micro)
      SELECT ${gateway}, ${mint}, ${bucket}, extract(epoch FROM date_trunc(${trunc}, to_timestamp(at) AT TIME ZONE 'UTC'))::bigint AS start,
        sum(amount), sum(floor(amount * 100 / 10000) - floor(floor(amount * 100 / 10000) * 2000 / 10000)), sum(floor(floor(amount * 100 / 10000) * 2000 / 10000)),
        sum(amount - floor(amount * 100 / 10000)), count(*), 0, 0, count(*) * 1000
      FROM payments GROUP BY start`.execute(env.db);
  }
  await sql`DROP TABLE bench_payers`.execute(env.db);
  for (const t of ['merchant_policies', 'merchant_subscribers', 'merchant_revenue', 'payments']) await sql.raw(`VACUUM ANALYZE ${t}`).execute(env.db);
}

/** The compiled SQL of a kysely query with its parameters inlined, for pgbench. */
function inlined(c: { sql: string; parameters: readonly unknown[] }): string {
  return c.sql.replace(/\$(\d+)/g, (_m, n: string) => {
    const v = c.parameters[Number(n) - 1];
    return typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`;
  });
}
const compiled = (q: Compilable) => inlined(q.compile());

function line(what: string, h: HttpLoad): void {
  process.stdout.write(`    ${what}: p50 ${h.p50} ms, p99 ${h.p99} ms, errors ${h.errors}, non-2xx ${h.non2xx}\n`);
}

/**
 * Streams the export to curl (another process, so the client's work is not measured with
 * the server's) and counts its lines; samples this process's RSS (the API node) meanwhile.
 */
async function exportRun(url: string): Promise<{ rows: number; ms: number; growthMb: number }> {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 50);
  const t0 = performance.now();
  const { stdout } = await promisify(execFile)('sh', ['-c', `curl -sf -H 'x-admin-key: ${ADMIN}' '${url}' | wc -l`], { maxBuffer: 1024 });
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { rows: Number(stdout.trim()) - 1, ms, growthMb: (peak - rss0) / 1024 / 1024 };
}

export async function benchMerchant(): Promise<void> {
  process.stdout.write(`merchant: one gateway, ${POLICIES} policies, ${PAYMENTS} payments over a year\n`);
  const env = await createTestEnv('bench_merchant');
  try {
    const gateway = key();
    const mint = key();
    const seeded = await timed(() => seed(env, gateway, mint));
    process.stdout.write(`  seeded in ${(seeded.ms / 1000).toFixed(1)} s\n`);
    const settings = { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000', ADMIN_API_KEY: ADMIN, SOLANA_RPC_URL: 'http://127.0.0.1:1' };
    const api = await startTestApi(env, settings);
    const uncached = await startTestApi(env, { ...settings, READ_CACHE_TTL_MS: '0' });
    const from = START + YEAR - 30 * 86_400;
    const to = START + YEAR - 1;
    const starts = bucketStarts('day', from, to);
    const subs = subscribersQuery(env.db, gateway, {});
    const cases = [
      { name: 'GET …/merchant/revenue?bucket=day (30 buckets)', url: `/v1/gateway/${gateway}/merchant/revenue?bucket=day&from=${from}&to=${to}`,
        sql: inlined(revenueRowsQuery(gateway, 'day', starts[0]!, starts[starts.length - 1]!).compile(env.db)) },
      { name: 'GET …/merchant/subscribers (100 of all)', url: `/v1/gateway/${gateway}/merchant/subscribers`,
        sql: `${compiled(subscriberRows(subs).limit(100).offset(0))};\n${compiled(subs.select(sql<string>`count(*)`.as('n')))}` },
    ];
    const headers = { 'x-admin-key': ADMIN };
    for (const c of PARTS.has('routes') ? cases : []) {
      const warm = await fetch(`${api.url}${c.url}`, { headers });
      if (!warm.ok) throw new Error(`${c.url}: ${warm.status} ${await warm.text()}`);
      // a shared Postgres may refuse 50 more clients: say so and go on to the next figure
      const pg = await pgbench(env.dbUrl, c.sql, 50, SECONDS).catch((err: Error) => {
        process.stdout.write(`    pgbench failed: ${err.message.split('\n').find((l) => l.includes('error')) ?? err.message}\n`);
        return { tps: 0, latencyMs: 0 };
      });
      const base = { name: 'pgbench same SQL', value: pg.tps };
      const live = await withCommits(env.redis, env.keys, MERCHANT_PROJECTION, 20, () => httpLoad(`${api.url}${c.url}`, 50, SECONDS, headers));
      report({ name: `${c.name} @50 conns, read cache on, 20 commits/s`, value: live.rps, unit: 'req/s', baseline: base, goal: 0.5 });
      line('20 commits/s', live);
      const cold = await httpLoad(`${uncached.url}${c.url}`, 50, SECONDS, headers);
      report({ name: '  same, READ_CACHE_TTL_MS=0 (every request queries Postgres)', value: cold.rps, unit: 'req/s', baseline: base });
      line('no cache', cold);
      process.stdout.write(`    pgbench avg latency ${pg.latencyMs} ms\n`);
    }
    // context for the ratios: what this node serves on a route that does no work at all
    const floor = PARTS.has('routes') ? await httpLoad(`${api.url}/v1/health`, 50, SECONDS) : undefined;
    if (floor) process.stdout.write(`  (this API node's ceiling: GET /v1/health @50 conns ${floor.rps.toFixed(0)} req/s, p99 ${floor.p99} ms)\n`);
    if (PARTS.has('export')) {
      const ex = await exportRun(`${api.url}/v1/gateway/${gateway}/merchant/export/payments?format=csv`);
      if (ex.rows !== PAYMENTS) throw new Error(`export gave ${ex.rows} rows, expected ${PAYMENTS}`);
      report({ name: `export of ${PAYMENTS} payments as CSV`, value: ex.rows / (ex.ms / 1000), unit: 'rows/s' });
      process.stdout.write(`    goal ≥ 100,000 rows/s; ${(ex.ms / 1000).toFixed(1)} s in all; resident memory grew ${ex.growthMb.toFixed(1)} MB (goal < 100 MB)\n`);
    }
    await uncached.close();
    await api.close();
  } finally {
    await env.close();
  }
}
