/**
 * Foundation benches: every read model's live and replay rate beside the server-side
 * insert limit (projection-rates.ts); the events API vs pgbench running the same SQL at
 * the same concurrency.
 */
import { sql } from 'kysely';
import { createTestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { routeVsPgbench } from './harness.js';
import { ROWS_PER_STATEMENT, serverInsertLimit } from './insert-limit.js';
import { benchProjectionRates } from './projection-rates.js';

const N = Number(process.env['BENCH_ARCHIVE_EVENTS'] ?? 100_000);
const REPLAY_N = Number(process.env['BENCH_REPLAY_EVENTS'] ?? 1_000_000);

export async function benchSpine(): Promise<void> {
  process.stdout.write('spine\n');
  const env = await createTestEnv('bench_spine');
  try {
    // Every read model, live and replayed, beside what Postgres takes alone (measured
    // before each phase: the machine is shared and its load moves).
    await benchProjectionRates(env, N, REPLAY_N, async () => {
      const limit = await serverInsertLimit(env.db, env.dbUrl);
      process.stdout.write(`  server-side insert limit (pgbench, 2 clients, ${ROWS_PER_STATEMENT} server-generated rows a statement, events-shaped table): ${limit.toFixed(0)} rows/s\n`);
      return limit;
    });
    if (process.env['BENCH_SPINE_API'] === '0') return;

    // The events API at 50 connections vs pgbench on the same SQL.
    await sql`ANALYZE events`.execute(env.db);
    const api = await startTestApi(env, { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000' });
    const uncached = await startTestApi(env, { LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000', READ_CACHE_TTL_MS: '0' });
    const path = '/v1/events?eventName=PaymentRecord&limit=100';
    await routeVsPgbench({
      name: `GET ${path}`, url: `${api.url}${path}`, uncachedUrl: `${uncached.url}${path}`, seconds: 10, goal: 0.5,
      sql: "SELECT id, name, signature, slot, block_time, ix_path, event_index, data FROM events WHERE name = 'PaymentRecord' ORDER BY slot DESC, seq DESC LIMIT 100 OFFSET 0",
      dbUrl: env.dbUrl, redis: env.redis, keys: env.keys, readModel: 'archive',
    });
    await uncached.close();
    await api.close();
  } finally {
    await env.close();
  }
}
