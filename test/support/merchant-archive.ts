/**
 * The merchant's revenue computed straight from the archive (the events table), in SQL
 * that shares nothing with projections/merchant: per gateway, mint and UTC bucket
 * (date_trunc's day, ISO week and month), the sum of PaymentRecord amounts and their
 * fees at the fee rate and protocol share in force when each was archived. Where the
 * payment carries the split execute_payment logged (fee_split), the recipient's amount
 * and the protocol cut are the chain's: a recipient paid the whole amount means net mode
 * (the fee on top). The gateway addresses of PaymentGatewayCreated (which names only the
 * authority) come in as a table.
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';

export interface ArchiveBucket {
  gateway: string; token_mint: string; bucket: string; bucket_start: string;
  gross: string; gateway_fee: string; protocol_fee: string; net: string; payments: string;
}

export async function archiveRevenue(db: Db): Promise<ArchiveBucket[]> {
  const pda = createPdaDeriver(PROGRAM_ID);
  const auths = await db.selectFrom('events').select(sql<string>`data->>'authority'`.as('a')).where('name', '=', 'PaymentGatewayCreated').execute();
  await sql`CREATE TEMP TABLE IF NOT EXISTS t_gw (authority text, gateway text)`.execute(db);
  await sql`TRUNCATE t_gw`.execute(db);
  for (const { a } of auths) await sql`INSERT INTO t_gw VALUES (${a}, ${pda.gateway(a)})`.execute(db);
  const r = await sql<ArchiveBucket>`
    WITH p AS (
      SELECT e.seq, e.data->>'gateway' AS gateway, e.data->>'token_mint' AS token_mint, (e.data->>'amount')::numeric AS amount,
        to_timestamp(coalesce(e.block_time, (e.data->>'timestamp')::bigint)) AT TIME ZONE 'UTC' AS at,
        coalesce((SELECT coalesce(x.data->>'new_fee_bps', x.data->>'gateway_fee_bps')::int FROM events x
          LEFT JOIN t_gw g ON g.authority = x.data->>'authority'
          WHERE x.seq < e.seq AND ((x.name = 'GatewayFeeBpsChanged' AND x.data->>'gateway' = e.data->>'gateway')
            OR (x.name = 'PaymentGatewayCreated' AND g.gateway = e.data->>'gateway'))
          ORDER BY x.seq DESC LIMIT 1), 0) AS fee_bps,
        coalesce((SELECT (x.data->>'protocol_share_bps')::int FROM events x WHERE x.seq < e.seq AND x.name = 'ProgramConfigCreated'
          ORDER BY x.seq DESC LIMIT 1), 2000) AS share,
        (e.data->'fee_split'->>'recipient_amount')::numeric AS logged_net,
        (e.data->'fee_split'->>'protocol_cut')::numeric AS logged_protocol,
        (e.data->'fee_split'->>'gateway_residual')::numeric + (e.data->'fee_split'->>'scheduler_cut')::numeric AS logged_rest
      FROM events e WHERE e.name = 'PaymentRecord'
    ), f AS (
      SELECT *, CASE
          WHEN logged_net IS NULL THEN floor(amount * fee_bps / 10000)
          WHEN logged_net < amount THEN amount - logged_net
          ELSE greatest(floor(amount * fee_bps / 10000), logged_rest + logged_protocol)
        END AS fee,
        coalesce(logged_net >= amount, false) AS net_mode
      FROM p
    ), g AS (
      SELECT *, coalesce(logged_protocol, floor(fee * share / 10000)) AS protocol FROM f
    ), b AS (
      SELECT 'day' AS bucket, date_trunc('day', at) AS start, * FROM g
      UNION ALL SELECT 'week', date_trunc('week', at), * FROM g
      UNION ALL SELECT 'month', date_trunc('month', at), * FROM g
    )
    SELECT gateway, token_mint, bucket, extract(epoch FROM start)::bigint::text AS bucket_start,
      sum(CASE WHEN net_mode THEN amount + fee ELSE amount END)::text AS gross, sum(fee - protocol)::text AS gateway_fee,
      sum(protocol)::text AS protocol_fee, sum(CASE WHEN net_mode THEN amount ELSE amount - fee END)::text AS net, count(*)::text AS payments
    FROM b GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`.execute(db);
  return r.rows;
}
