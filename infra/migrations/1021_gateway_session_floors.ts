/**
 * A gateway's revocation of its sessions (commands/gateway-auth/session-floors.ts). Frozen.
 *
 * A gateway JWT lives GATEWAY_TOKEN_TTL_SECONDS (an hour) and could not be ended before: one
 * taken from a merchant's browser acted for the gateway (and minted API keys) until it expired.
 * - gateway_session_floors: per gateway, the time (unix seconds) before which its gateway JWTs
 *   were issued is refused; written by POST /v1/gateway/{gateway}/auth/revoke.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE gateway_session_floors (
      gateway text PRIMARY KEY,
      not_before bigint NOT NULL,
      revoked_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS gateway_session_floors`.execute(db);
}
