/**
 * The node's x402 `exact` facilitator (commands/x402/exact), built once per API node and
 * shared by the facilitator routes and the demo: the node's database, Redis and chain, the
 * keys' encryption key, the settings. Its payments reach the Socket.IO rooms through the
 * node's realtime server once that is attached (`exactRealtimeAttachment`); the Redis
 * adapter carries an emit to every node.
 */
import type { Server } from 'socket.io';
import type { AppNode, ServerAttachment } from './node.js';
import { createExactFacilitator, type ExactFacilitator } from '../../commands/x402/exact/facilitator.js';
import type { RoomEmitter } from '../../commands/scheduler/lifecycle-events.js';
import { settlementCommitment } from '../../infra/solana/chain-reader.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { roomOf } from '../../queries/realtime/keys.js';
import { bumpReadVersions } from '../../infra/cache/read-cache.js';
import { MERCHANT_PROJECTION } from '../kernel/names/index.js';

interface NodeExact { facilitator: ExactFacilitator; io?: Server }

const byNode = new WeakMap<AppNode, NodeExact>();

function nodeExact(node: AppNode): NodeExact {
  let e = byNode.get(node);
  if (e) return e;
  const { solana, x402, redis, keys } = node.config;
  const slot: NodeExact = {
    facilitator: createExactFacilitator({
      db: node.db, redis: node.redis, keyPrefix: redis.prefix, rpc: node.rpc, commitment: settlementCommitment(solana.commitment),
      network: solana.network, encryptionKey: keys.encryptionKey, clock: node.clock,
      settings: {
        maxPriorityFeeMicroLamports: x402.exact.maxPriorityFeeMicroLamports, maxComputeUnits: x402.exact.maxComputeUnits,
        confirmTimeoutMs: x402.confirmTimeoutMs, idempotencyTtlSeconds: x402.idempotencyTtlSeconds, keyCacheMs: 5000,
      },
      rooms: { emit: (trackingId, event, body) => void slot.io?.to(roomOf(trackingId)).emit(event, body) },
      // the merchant's revenue and exports count exact payments: their cached answers go
      recorded: () => bumpReadVersions(node.redis, node.keys, MERCHANT_PROJECTION),
    }),
  };
  e = slot;
  byNode.set(node, e);
  return e;
}

export const exactFacilitatorOf = (node: AppNode): ExactFacilitator => nodeExact(node).facilitator;

/** The node's Socket.IO rooms, once the realtime server is attached (before: nothing is emitted). */
export const nodeRooms = (node: AppNode): RoomEmitter => ({ emit: (trackingId, event, body) => void nodeExact(node).io?.to(roomOf(trackingId)).emit(event, body) });

/** The realtime attachment, its server also the exact payments' room emitter. */
export function exactRealtimeAttachment(): ServerAttachment {
  const attach = realtimeAttachment();
  return async (server, node) => {
    const rt = await attach(server, node);
    nodeExact(node).io = rt.io;
    return rt;
  };
}
