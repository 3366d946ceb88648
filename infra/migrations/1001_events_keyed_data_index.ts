/**
 * The GIN index of the archive's event fields keeps out the fields whose values are new
 * with every event (amounts, times, record and policy ids, memos, names, nested configs):
 * no route filters on them, and each such value is a GIN key of its own, where a public
 * key (gateway, payer, token_mint, …) joins the posting list of the events before it.
 * With them, the GIN took about 6 us of the ~22 us the server spends on an archived
 * PaymentRecord (50,000 events COPYed into a table shaped as `events`); without, about 1.
 *
 * events_keyed_data(data) is `data` less those top-level fields; the index is on it, and
 * a filter reads `events_keyed_data(data) @> events_keyed_data(f) AND data @> f`: the
 * first is implied by the second (dropping the same top-level keys from both sides keeps
 * a containment true), so the index finds every match and the second is exact. The SQL
 * function is inlined by the planner in the index and in the query alike.
 *
 * Plain CREATE/DROP INDEX: migrations run in a transaction, where CONCURRENTLY cannot; on
 * a large archive the GIN build holds off the archive's writes while it reads the table
 * once. Frozen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION events_keyed_data(data jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN data - '{amount,timestamp,record_id,memo,memo_hex,fee_split,input_amount,output_amount,gateway_fee,protocol_fee,payment_amount,rewards,policy_id,policy_type,created_policies_count,forward_config,pre_validation,post_validation,name,url,gateway_fee_bps,old_fee_bps,new_fee_bps,protocol_share_bps}'::text[]`.execute(db);
  await sql`CREATE INDEX events_keyed_data_idx ON events USING gin (events_keyed_data(data) jsonb_path_ops)`.execute(db);
  await sql`DROP INDEX IF EXISTS events_data_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS events_data_idx ON events USING gin (data jsonb_path_ops)`.execute(db);
  await sql`DROP INDEX IF EXISTS events_keyed_data_idx`.execute(db);
  await sql`DROP FUNCTION IF EXISTS events_keyed_data(jsonb)`.execute(db);
}
