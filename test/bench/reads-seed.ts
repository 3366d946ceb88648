/**
 * The read mix's data, written in the server where it can be: 10,000
 * gateways, 100,000 payment policies (10 per gateway, 5 per recipient, the six variants
 * in turn, 80% in the default stablecoin), 1,000,000 payments (10 per policy) with their
 * PaymentRecord events in the archive, and the daily stats of those payments.
 *
 * Keys are ranked: rank k (1-based) is row k of bench_gateways, bench_recipients and
 * bench_policies, tables kept for pgbench's scripts, which look a key up by its rank. A
 * policy's tracking id is `order-<rank>`.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { policyDoc } from '../../projections/policies/doc.js';
import type { Json } from '../../src/kernel/events/codec.js';
import { policyType, VARIANTS } from './policies.js';

export interface SeedSize { gateways: number; policies: number; payments: number }
export interface Seeded { gateways: string[]; recipients: string[]; policies: string[] }

const T0 = 1_700_000_000;
const key = (): string => bs58.encode(randomBytes(32));
const keys = (n: number): string[] => Array.from({ length: n }, key);

/** Ranked keys into a two-column table (i, key) with one statement. */
async function rankTable(db: Db, table: string, values: string[]): Promise<void> {
  await sql`CREATE TABLE ${sql.table(table)} (i int PRIMARY KEY, key text NOT NULL)`.execute(db);
  await sql`INSERT INTO ${sql.table(table)} SELECT i, k FROM unnest(${values}::text[]) WITH ORDINALITY AS t(k, i)`.execute(db);
}

async function seedPolicies(db: Db, size: SeedSize, s: Seeded, defaultMint: string): Promise<void> {
  const other = key();
  for (let from = 0; from < size.policies; from += 5000) {
    const rows = [];
    for (let i = from; i < Math.min(size.policies, from + 5000); i += 1) {
      const variant = VARIANTS[i % VARIANTS.length]!;
      const memo = Buffer.alloc(64);
      memo.write(`order-${i + 1}`);
      const row = {
        address: s.policies[i]!, policy_id: String(1 + (i % 7)), user_payment: key(), owner: key(), token_mint: i % 5 === 4 ? other : defaultMint,
        gateway: s.gateways[i % size.gateways]!, recipient: s.recipients[(i * 7) % s.recipients.length]!, variant, policy_type: policyType(variant, i) as Json,
        memo, tracking_id: `order-${i + 1}`, status: 'Active', total_paid: '0', total_output: null, extra: null, payment_count: 0,
        last_payment_at: null, last_payment_signature: null, next_payment_due: String(T0 + i), created_at: String(T0 + i),
        updated_at: String(T0 + i), created_slot: String(1000 + i), created_signature: 'x', deleted: false, deleted_at: null,
      };
      rows.push({ ...row, memo: `\\x${memo.toString('hex')}`, doc: policyDoc('payment', row) });
    }
    await sql`INSERT INTO payment_policies SELECT * FROM json_populate_recordset(null::payment_policies, ${JSON.stringify(rows)}::json)`.execute(db);
  }
}

async function seedPayments(db: Db, size: SeedSize): Promise<void> {
  await sql`
    INSERT INTO payments (event_id, kind, policy, gateway, signature, slot, event_index, block_time, timestamp, at, amount,
      payer, recipient, token_mint, record_id, memo, tracking_id, doc)
    SELECT 'sig' || g || ':0:0', 'PaymentRecord', p.address, p.gateway, 'sig' || g, 2000 + g, 0, ${T0} + g, ${T0} + g,
      ${T0} + g, 1000000 + g % 1000, p.address, p.recipient, p.token_mint, g / ${size.policies}::int, p.memo, p.tracking_id,
      json_build_object('id', 'sig' || g || ':0:0', 'name', 'PaymentRecord', 'signature', 'sig' || g, 'slot', 2000 + g,
        'blockTime', ${T0} + g, 'timestamp', to_char(to_timestamp(${T0} + g) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.000"Z"'),
        'ixPath', '0', 'index', 0, 'data', json_build_object('payment_policy', p.address, 'gateway', p.gateway,
          'amount', (1000000 + g % 1000)::text, 'timestamp', (${T0} + g)::text, 'memo', p.tracking_id, 'memo_hex', encode(p.memo, 'hex'),
          'record_id', g / ${size.policies}::int, 'payer', p.address, 'recipient', p.recipient, 'token_mint', p.token_mint), 'trackingId', p.tracking_id)::text
    FROM generate_series(0, ${size.payments - 1}::int) g
    JOIN payment_policies p ON p.created_slot = 1000 + g % ${size.policies}::int`.execute(db);
  // the archive holds the same PaymentRecord events, as the archive projection stores them;
  // its GIN index is built once afterwards, the same index, far faster than row by row
  const gin = await sql<{ indexdef: string }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'events' AND indexdef LIKE '%USING gin%'`.execute(db);
  for (const g of gin.rows) await sql`DROP INDEX ${sql.id(/^CREATE INDEX (\S+)/.exec(g.indexdef)![1]!)}`.execute(db);
  await sql`
    INSERT INTO events (id, name, signature, slot, block_time, ix_path, event_index, memo, data)
    SELECT event_id, 'PaymentRecord', signature, slot, block_time, '0', 0, memo, (doc::jsonb)->'data' FROM payments`.execute(db);
  for (const i of gin.rows) await sql.raw(i.indexdef).execute(db);
  await sql`
    INSERT INTO payment_stats_daily (gateway, day, payments, volume)
    SELECT gateway, at / 86400, count(*), sum(amount) FROM payments GROUP BY 1, 2`.execute(db);
}

export async function seedReads(db: Db, size: SeedSize, defaultMint: string): Promise<Seeded> {
  const s: Seeded = { gateways: keys(size.gateways), recipients: keys(Math.max(1, size.policies / 5)), policies: keys(size.policies) };
  await rankTable(db, 'bench_gateways', s.gateways);
  await rankTable(db, 'bench_recipients', s.recipients);
  await rankTable(db, 'bench_policies', s.policies);
  await sql`
    INSERT INTO gateways (address, authority, fee_recipient, signer, fee_bps, name, url, active, created_slot, created_signature)
    SELECT key, key, key, key, 50, 'gateway ' || i, 'https://example.com/' || i, true, i, 'x' FROM bench_gateways`.execute(db);
  await seedPolicies(db, size, s, defaultMint);
  // memo of rank k, in both encodings the events API matches a tracking id by
  await sql`ALTER TABLE bench_policies ADD COLUMN memo bytea, ADD COLUMN memo32 bytea`.execute(db);
  await sql`UPDATE bench_policies b SET memo = p.memo, memo32 = substring(p.memo FROM 1 FOR 32) FROM payment_policies p WHERE p.address = b.key`.execute(db);
  await seedPayments(db, size);
  // the read models stand built: the projector must not rebuild them from the archive on start
  await sql`INSERT INTO projection_checkpoints (projection, last_stream_id, events_applied)
    SELECT name, '0-0', 0 FROM unnest(${PROJECTIONS.map((p) => p.name)}::text[]) AS name ON CONFLICT DO NOTHING`.execute(db);
  for (const t of ['payment_policies', 'payments', 'events', 'payment_stats_daily', 'gateways', 'bench_gateways', 'bench_recipients', 'bench_policies']) {
    await sql`VACUUM ANALYZE ${sql.table(t)}`.execute(db);
  }
  return s;
}
