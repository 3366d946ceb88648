/**
 * The checkout routes of an API node (commands/checkout): the node's credentials lookups,
 * chain, payment engine and Socket.IO rooms, and the mint amounts of the skill document
 * (queries/skill: a mint's decimals read from the chain and cached, the exact conversion).
 */
import type { Api } from '../../infra/http/routes.js';
import { createSharedCache } from '../../infra/upstream/shared-cache.js';
import { settlementCommitment } from '../../infra/solana/chain-reader.js';
import { createPaymentEngine } from '../../commands/x402/engine.js';
import { registerCheckoutRoutes } from '../../commands/checkout/routes.js';
import type { MintAmounts } from '../../commands/checkout/requirement.js';
import { formatBaseUnits, toBaseUnits } from '../../queries/skill/amount.js';
import { mintDecimals } from '../../queries/skill/routes.js';
import type { AppNode } from './node.js';
import { nodeRooms } from './x402-exact.js';

export function mintAmountsOf(node: AppNode): MintAmounts {
  const cache = createSharedCache(node.redis, node.config.redis.prefix);
  return {
    decimals: (mint) => mintDecimals(node.rpc, cache, mint, node.config.solana.commitment),
    toBaseUnits, formatBaseUnits,
  };
}

export function registerCheckout(api: Api, node: AppNode): void {
  registerCheckoutRoutes(api, {
    ...node, amounts: mintAmountsOf(node), engine: createPaymentEngine(node.x402), rooms: nodeRooms(node),
    commitment: settlementCommitment(node.config.solana.commitment),
  });
}
