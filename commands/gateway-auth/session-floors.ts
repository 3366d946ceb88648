/**
 * A gateway ends its sessions: every gateway JWT issued before now is refused from then on,
 * on every API node within GATEWAY_KEYS_CACHE_MS (the floor is read with the gateway's keys,
 * and cached with them). For a token taken from a merchant's browser: without this it acted
 * for the gateway until it expired (GATEWAY_TOKEN_TTL_SECONDS). API keys are credentials of
 * their own and are revoked one by one (the listing names the wallet each was created by).
 */
import { sql } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';

/**
 * Revokes every gateway JWT of `gateway` issued before the next whole second (a JWT's iat is in
 * seconds: one issued in this second may be the revoked one). Answers that second (unix s).
 */
export async function revokeSessions(db: Db, gateway: string, nowMs: number): Promise<number> {
  const floor = Math.floor(nowMs / 1000) + 1;
  await db.insertInto('gateway_session_floors').values({ gateway, not_before: String(floor), revoked_at: new Date(nowMs) })
    .onConflict((oc) => oc.column('gateway').doUpdateSet({
      not_before: sql<string>`greatest(gateway_session_floors.not_before, excluded.not_before)`, revoked_at: (eb) => eb.ref('excluded.revoked_at'),
    }))
    .execute();
  return floor;
}

/** `lookup`'s keys with the gateway's session floor (sessionsFrom), when it revoked its sessions. */
export function withSessionFloors(lookup: GatewayLookup, db: Db): GatewayLookup {
  return async (address) => {
    const [keys, floor] = await Promise.all([
      lookup(address),
      db.selectFrom('gateway_session_floors').select('not_before').where('gateway', '=', address).executeTakeFirst(),
    ]);
    return keys && floor ? { ...keys, sessionsFrom: Number(floor.not_before) } : keys;
  };
}
