/**
 * Gateway keys from the gateways read model (projections/gateways): the authority and
 * the current signer (GatewaySignerChanged folded in). Deleted gateways are unknown.
 */
import type { Db } from '../../infra/postgres/database.js';
import { upstreamUnavailable } from '../../src/http/errors.js';
import type { GatewayLookup } from '../../commands/gateway-auth/gateway-lookup.js';

export function readModelGatewayLookup(db: Db): GatewayLookup {
  return async (address) => {
    try {
      return await db
        .selectFrom('gateways')
        .select(['authority', 'signer'])
        .where('address', '=', address)
        .where('deleted', '=', false)
        .executeTakeFirst();
    } catch {
      throw upstreamUnavailable('gateway read model unavailable');
    }
  };
}
