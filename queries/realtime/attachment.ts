/**
 * Socket.IO on the API node's HTTP server at /ws/v1, rooms shared through the Redis
 * adapter, connection slots leased in Redis and renewed every lease/3 while the node
 * lives. Payments are not produced here: the notifier broadcasts them to the rooms.
 */
import type { Server as HttpServer } from 'node:http';
import { Server, type Socket } from 'socket.io';
import type { Redis } from 'ioredis';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { TokenVerifier } from '../../src/kernel/auth/gateway-token.js';
import type { GatewayLookup } from '../../src/kernel/auth/gateway-lookup.js';
import type { ApiKeyLookup } from '../../src/kernel/auth/api-key-lookup.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import type { Metrics } from '../../infra/metrics/metrics.js';
import { socketCorsOptions } from '../../infra/http/cors.js';
import { attachRedisAdapter } from './adapter.js';
import { NOTIFIER_GROUP, realtimeKeys, roomOf } from './keys.js';
import { createSlotLeases } from './slots.js';
import { clientAddress } from './client-address.js';
import { dropSocket, isReply, recordOutgoing, resync, subscribe, unsubscribe, type ProtocolDeps, type SocketState } from './subscriptions.js';
import type { Since } from './since.js';
import { attachMerchantLive } from './merchant-live.js';
import { PAYMENTS_GROUP } from '../../src/kernel/names/index.js';

export const WS_PATH = '/ws/v1';

/** How long catch-up waits for a payment the notifier is in the middle of publishing. */
const CLAIM_WAIT_MS = 2000;
/**
 * How long catch-up waits for the payments read model to reach what the notifier has read
 * (live delivery goes on meanwhile); past it, catch-up sends what the model has and says
 * `complete: false`.
 */
const READ_MODEL_WAIT_MS = 30_000;
/** How far before a lost subscriber connection a resync starts reading (block times trail broadcasts). */
const RESYNC_MARGIN_MS = 60_000;
/** Most payments one catch-up sends (oldest first); `caught_up.more` tells the client to ask again from the last one. */
export const CATCH_UP_LIMIT = 1000;

export interface RealtimeNode {
  io: Server;
  /** sockets connected to this node: the metrics hook */
  connectedSockets(): number;
  /** (socket, trackingId) subscriptions held on this node */
  subscriptions(): number;
  close(): Promise<void>;
}

/** What a Socket.IO node works with; the API node meets it. */
export interface RealtimeDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  keys: Pick<StreamKeys, 'events'>;
  clock: Clock;
  /** checks the gateway JWTs of merchant live feeds */
  keyRing: TokenVerifier;
  /** the gateway's keys now: a feed is refused to a wallet that is no longer the gateway's */
  gatewayKeys: GatewayLookup;
  /** who a gateway API key acts for: a merchant feed may open with one */
  apiKeys: ApiKeyLookup;
}

export async function startRealtimeNode(server: HttpServer, ctx: RealtimeDeps): Promise<RealtimeNode> {
  const { config, logger } = ctx;
  const log = logger.child({ component: 'realtime' });
  const io = new Server(server, {
    path: WS_PATH,
    serveClient: false,
    // CORS_ORIGINS as on the HTTP API; the handshake carries no credential header (infra/http/cors.ts)
    cors: socketCorsOptions(config.http.corsOrigins),
    // clients only send small subscribe/unsubscribe messages
    maxHttpBufferSize: 16 * 1024,
  });
  const adapter = await attachRedisAdapter(io, config, log);
  const merchantLive = attachMerchantLive(io, {
    verifier: ctx.keyRing, adminKey: config.keys.adminApiKey, keys: ctx.gatewayKeys, apiKeys: ctx.apiKeys,
    redis: ctx.redis, prefix: config.redis.prefix, recheckMs: config.ws.authRecheckSeconds * 1000, clock: ctx.clock, logger: log,
  });
  const keys = realtimeKeys(config.redis.prefix);
  const leaseMs = config.ws.leaseSeconds * 1000;
  const leases = createSlotLeases(ctx.redis, keys.slots, leaseMs, config.ws.maxConnectionsPerTrackingId, config.ws.maxConnectionsPerIpPerTrackingId);
  const deps: ProtocolDeps = {
    leases,
    logger: log,
    maxCatchUpsPerMinute: config.ws.maxCatchUpsPerMinute,
    now: () => ctx.clock.now(),
    catchUp: {
      // the primary: catch-up waits for the payments projection's progress there, and a
      // lagging replica could still miss a payment the projection already committed
      db: ctx.db, redis: ctx.redis, keys, clock: ctx.clock, barrier: () => adapter.barrier(),
      limit: CATCH_UP_LIMIT, status: config.solana.commitment, claimWaitMs: CLAIM_WAIT_MS,
      readModelWaitMs: READ_MODEL_WAIT_MS, stream: ctx.keys.events, notifierGroup: NOTIFIER_GROUP, paymentsGroup: PAYMENTS_GROUP,
      onReadModelLate: () => log.warn('payments read model behind the notifier; catch-up may miss its newest payments'),
    },
  };
  const states = new Map<string, SocketState>();

  // Broadcasts published while the subscriber connection was away reached no socket here,
  // and the sockets, still connected, would never ask again: every subscription catches
  // up from a little before the loss (payment block times run behind the broadcast).
  adapter.onResubscribed((lostAtMs) => {
    const since: Since = { kind: 'time', seconds: Math.max(0, Math.floor((lostAtMs - RESYNC_MARGIN_MS) / 1000)) };
    const subs = [...states.values()].flatMap((state) => [...state.subs.values()].map((sub) => ({ state, sub })));
    log.warn({ lostAt: new Date(lostAtMs).toISOString(), subscriptions: subs.length }, 'adapter subscriber reconnected; catching every subscription up');
    for (const { state, sub } of subs) {
      resync(deps, state, sub, since).catch((err: Error) => log.warn({ err: err.message, trackingId: sub.trackingId }, 'resync failed'));
    }
  });

  io.on('connection', (socket: Socket) => {
    const state: SocketState = {
      socket, subs: new Map(), client: clientAddress(socket.request, config.http.trustProxy), catchUps: { windowStart: 0, count: 0 },
    };
    states.set(socket.id, state);
    socket.onAnyOutgoing((event: string, msg: unknown) => recordOutgoing(state, event, msg));
    // every message costs Redis work (a lease, a room): a budget per connection, and one error per window, not one per message
    let window = { start: 0, count: 0, told: false };
    const admitted = (reply: unknown): boolean => {
      const now = ctx.clock.now();
      if (now - window.start >= 60_000) window = { start: now, count: 0, told: false };
      window.count += 1;
      if (window.count <= config.ws.maxMessagesPerMinute) return true;
      const body = { code: 'rate_limited', message: `at most ${config.ws.maxMessagesPerMinute} messages per minute per connection` };
      if (isReply(reply)) reply({ ok: false, error: body });
      if (!window.told) socket.emit('error', body);
      window.told = true;
      return false;
    };
    const handle = (fn: typeof subscribe) => (payload: unknown, reply: unknown) => {
      if (!admitted(reply)) return;
      fn(deps, state, payload, isReply(reply) ? reply : undefined).catch((err: Error) => {
        log.error({ err: err.message }, 'socket handler failed');
        socket.emit('error', { code: 'unavailable', message: 'internal error, retry' });
      });
    };
    socket.on('subscribe', handle(subscribe));
    socket.on('unsubscribe', handle(unsubscribe));
    socket.on('disconnect', () => {
      states.delete(socket.id);
      void dropSocket(deps, state);
    });
  });

  /** Renews every lease of this node; a lease lost (the node stalled past it) and not retaken ends that subscription. */
  async function renewAll(): Promise<void> {
    const held = [...states.values()].flatMap((s) => [...s.subs.values()].filter((sub) => sub.held).map((sub) => ({ state: s, sub })));
    const results = await leases.renew(held.map((h) => ({ trackingId: h.sub.trackingId, socketId: h.state.socket.id, client: h.state.client })));
    for (const [i, r] of results.entries()) {
      const h = held[i]!;
      if (r === 'held' || !h.sub.active) continue;
      h.sub.active = false;
      h.state.subs.delete(h.sub.trackingId);
      await h.state.socket.leave(roomOf(h.sub.trackingId));
      h.state.socket.emit('error', { code: 'too_many_connections', message: 'connection slot lost and the trackingId is at its cap', trackingId: h.sub.trackingId });
    }
  }
  let renewing = false;
  const renewer = setInterval(() => {
    if (renewing) return;
    renewing = true;
    renewAll().catch((err: Error) => log.warn({ err: err.message }, 'lease renewal failed')).finally(() => { renewing = false; });
  }, Math.max(200, Math.floor(leaseMs / 3)));
  renewer.unref();

  return {
    io,
    connectedSockets: () => io.of('/').sockets.size,
    subscriptions: () => [...states.values()].reduce((n, s) => n + s.subs.size, 0),
    async close() {
      clearInterval(renewer);
      await merchantLive.close();
      const all = [...states.values()];
      states.clear();
      // io.close() would also close the HTTP server and wait for its keep-alive sockets;
      // the API server closes that itself, gracefully
      await Promise.all(all.map((s) => dropSocket(deps, s)));
      for (const s of all) s.socket.disconnect(true);
      await io.of('/').adapter.close();
      io.engine.close();
      await adapter.close();
    },
  };
}

/** The attachment for SERVER_ATTACHMENTS; `onStart` hands the node to whoever exports its metrics. */
export function realtimeAttachment(onStart?: (node: RealtimeNode) => void): (server: HttpServer, ctx: RealtimeDeps & { metrics: Metrics }) => Promise<RealtimeNode> {
  return async (server, ctx) => {
    const node = await startRealtimeNode(server, ctx);
    // The node's socket count, read when /metrics is scraped.
    ctx.metrics.socketSource.count = () => node.connectedSockets();
    onStart?.(node);
    return node;
  };
}
