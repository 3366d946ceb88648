/**
 * Which key a webhook's gateway_pubkey is. SPEC ("Webhook"): "gateway authority public
 * key". The gateway account's address (PDA("gateway", authority)) is refused with a 400
 * that names the key expected, on every route that takes a gateway_pubkey (POST, and
 * GET/DELETE /v1/webhooks/gateway/{gatewayPubkey}), so one gateway has one name and a
 * webhook is always listed and deleted under the key it was registered with.
 *
 * Refusing rather than normalizing: a key cannot be turned into its authority without a
 * lookup, and a webhook stored under a key the caller never sent would surprise them.
 *
 * How an account is recognized. A gateway JWT names its gateway account G: sending G is
 * refused with no I/O. For the admin key, the gateway lookup (the chain first, the
 * gateways read model when the chain does not answer) says whether the key is a gateway
 * account; a key it does not know is taken as an authority (a gateway created a moment
 * ago on an unreachable chain can slip through; it is still delivered to, see
 * projections/webhooks).
 */
import type { RequestAuth } from '../../src/kernel/auth/gateway-token.js';
import { invalid } from '../../src/kernel/http/errors.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';

function accountRefused(key: string, field: string, authority: string | undefined) {
  const expected = authority ? `: for this gateway, ${authority}` : '';
  return invalid(`${field} must be the gateway's authority public key, not the gateway account address ${key}${expected}`);
}

/** The authority of a gateway account, if the lookup answers; only to word the refusal. */
async function authorityOf(lookup: GatewayLookup, account: string): Promise<string | undefined> {
  try {
    return (await lookup(account))?.authority;
  } catch {
    return undefined;
  }
}

/** A 400 when `key` (already a well-formed public key) is a gateway account address. */
export async function refuseGatewayAccount(lookup: GatewayLookup, auth: RequestAuth, key: string, field: string): Promise<void> {
  if (auth.kind === 'gateway') {
    // Any other key a token may act for satisfies PDA("gateway", key) = G: an authority.
    if (auth.claims.gateway === key) throw accountRefused(key, field, await authorityOf(lookup, key));
    return;
  }
  const keys = await lookup(key);
  if (keys) throw accountRefused(key, field, keys.authority);
}
