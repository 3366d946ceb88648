/**
 * Who may sign in for a gateway, from the chain first and the read model second.
 *
 * The chain is the authority: a signer changed a moment ago is already the one that
 * counts, and a deleted gateway (closed account) is unknown at once. When the chain does
 * not answer, the gateways read model (projections/gateways, GatewaySignerChanged folded
 * in) answers instead, seconds behind at most; when neither answers, 503.
 */
import type { Db } from '../postgres/database.js';
import type { Logger } from '../log/logger.js';
import { readProgramAccount, type AccountReadOptions } from '../solana/accounts.js';
import type { RpcClient } from '../solana/rpc-client.js';
import { upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';

export function readModelGatewayLookup(db: Db): GatewayLookup {
  return async (address) => {
    try {
      return await db
        .selectFrom('gateways')
        .select(['authority', 'signer', 'active'])
        .where('address', '=', address)
        .where('deleted', '=', false)
        .executeTakeFirst();
    } catch {
      throw upstreamUnavailable('gateway read model unavailable');
    }
  };
}

/** The PaymentGateway account; throws the RPC client's errors when the chain does not answer. */
export function chainGatewayLookup(rpc: RpcClient, opts: AccountReadOptions): GatewayLookup {
  return async (address) => {
    const read = await readProgramAccount(rpc, address, 'PaymentGateway', opts);
    if (read.kind !== 'found') return undefined;
    const { authority, signer } = read.data;
    const active = read.data['is_active'] === true;
    return typeof authority === 'string' && typeof signer === 'string' ? { authority, signer, active } : undefined;
  };
}

export function chainFirstGatewayLookup(chain: GatewayLookup, readModel: GatewayLookup, logger: Logger): GatewayLookup {
  return async (address) => {
    try {
      return await chain(address);
    } catch (err) {
      logger.debug({ err: (err as Error).message }, 'chain unavailable for gateway lookup; using the read model');
      return readModel(address);
    }
  };
}
