/**
 * The notifier: ONE consumer group (`notifier`) for the whole cluster, however many
 * notifier processes share it, so each payment is broadcast once, to the room of its
 * trackingId, through the Socket.IO Redis adapter, and reaches the sockets on every API
 * node. It holds no sockets: a Socket.IO server that is attached to nothing, with the
 * same adapter as the nodes (plain or sharded; the stand-alone redis-emitter speaks only
 * the plain protocol).
 *
 * Per batch: parse; build the payment (a ComposableExecuted resolves its trackingId
 * through the composable read model, and waits in the pending list while that model has
 * not seen the policy yet); claim the events (the dedup key, emission-marks.ts); broadcast
 * the claimed ones, leaving out the sockets that got them through catch-up; mark them
 * published; acknowledge.
 */
import type { Redis } from 'ioredis';
import { Server } from 'socket.io';
import { MERCHANT_NAMESPACE, gatewayRoom } from './merchant-live.js';
import type { Config } from '../../src/kernel/config/config.js';
import type { Clock } from '../../src/kernel/domain/clock.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import type { StreamKeys } from '../../infra/redis/client.js';
import { createStreamReader } from '../../infra/redis/client.js';
import { createLru } from '../../src/kernel/domain/lru.js';
import { parseEvent, type TributaryEvent } from '../../src/kernel/events/envelope.js';
import { ack, type StreamEntry } from '../../infra/redis/stream-group.js';
import { consumerName, createConsumerLoop, type EntrySource } from '../../infra/redis/consumer-loop.js';
import { attachRedisAdapter, type RealtimeAdapter } from './adapter.js';
import { NOTIFIER_GROUP, realtimeKeys, roomOf } from './keys.js';

export { NOTIFIER_GROUP };
import { claimEvents, markPublished } from './emission-marks.js';
import { composableExecutedData, notification, paymentRecordData, type ComposableRef, type PaymentData } from './notification.js';
import { composablePolicies } from './payment-queries.js';

export interface NotifierOptions {
  batchSize: number;
  blockMs: number;
  /** a dead notifier's pending entries and claims are taken over after this idle time */
  claimIdleMs: number;
  /** a ComposableExecuted whose policy the read model never shows is dropped after this */
  unresolvedGiveUpMs?: number;
}

export interface RunningNotifier {
  stop(): Promise<void>;
  stats(): { emitted: number; duplicates: number; ignored: number; dropped: number };
}

const RETRY_PENDING_MS = 250;

interface Ready { entries: StreamEntry[]; event: TributaryEvent; data: PaymentData }
/** The events that become payment notifications. */
type Notified = TributaryEvent<'PaymentRecord' | 'ComposableExecuted'>;

/** The notifier's collaborators: the stream and the Socket.IO adapter in Redis, the read models for composable policies. */
export interface NotifierDeps { config: Config; redis: Redis; keys: StreamKeys; clock: Clock; logger: Logger; dbRead: Db }

export async function startNotifier(ctx: NotifierDeps, opts: NotifierOptions): Promise<RunningNotifier> {
  const { config, redis, keys: streamKeys, clock } = ctx;
  const log = ctx.logger.child({ component: 'notifier' });
  const keys = realtimeKeys(config.redis.prefix);
  const io = new Server();
  const adapter: RealtimeAdapter = await attachRedisAdapter(io, config, log);
  // the stream's reads on connections that never send a read again after a reconnect (createStreamReader)
  const blocking: Redis = createStreamReader(config.redis);
  const reads: Redis = createStreamReader(config.redis);
  for (const r of [blocking, reads]) r.on('error', () => undefined);
  const consumer = consumerName();
  const status = config.solana.commitment;
  const giveUpMs = opts.unresolvedGiveUpMs ?? 60_000;
  const composables = createLru<string, ComposableRef>(10_000);
  const firstDeferred = new Map<string, number>();
  const stats = { emitted: 0, duplicates: 0, ignored: 0, dropped: 0 };
  let stopping = false;

  async function resolveComposables(events: readonly TributaryEvent[]): Promise<void> {
    const wanted = [...new Set(events.flatMap((e) => (e.name === 'ComposableExecuted' ? [e.data.composable_policy] : [])))]
      .filter((a) => composables.get(a) === undefined);
    if (wanted.length === 0) return;
    for (const [address, ref] of await composablePolicies(ctx.dbRead, wanted)) composables.set(address, ref);
  }

  function build(e: Notified): PaymentData | undefined {
    if (e.name === 'PaymentRecord') return paymentRecordData(e, status);
    const ref = composables.get(e.data.composable_policy);
    return ref ? composableExecutedData(e, ref, status) : undefined;
  }

  async function process(entries: StreamEntry[], from: EntrySource): Promise<void> {
    if (from === 'claimed') log.info({ count: entries.length }, 'took over a dead notifier\'s pending entries');
    const done: string[] = [];
    const byEvent = new Map<string, Ready>();
    const parsed: { entry: StreamEntry; event: Notified }[] = [];
    for (const entry of entries) {
      try {
        const event = parseEvent(entry.payload ?? '');
        if (event.name === 'PaymentRecord' || event.name === 'ComposableExecuted') parsed.push({ entry, event });
        else { done.push(entry.streamId); stats.ignored += 1; }
      } catch {
        done.push(entry.streamId); // the projections dead-letter it; nothing to notify
      }
    }
    await resolveComposables(parsed.map((p) => p.event));
    let deferred = 0;
    for (const { entry, event } of parsed) {
      let data: PaymentData | undefined;
      try {
        data = build(event);
      } catch (err) {
        log.warn({ err: (err as Error).message, id: event.id }, 'payment event does not match the IDL; not notified');
        done.push(entry.streamId);
        continue;
      }
      if (!data) {
        const since = firstDeferred.get(entry.streamId) ?? clock.now();
        firstDeferred.set(entry.streamId, since);
        if (clock.now() - since < giveUpMs) { deferred += 1; continue; }
        log.warn({ id: event.id }, 'composable policy unknown to the read model; execution not notified');
        stats.dropped += 1;
        firstDeferred.delete(entry.streamId);
        done.push(entry.streamId);
        continue;
      }
      firstDeferred.delete(entry.streamId);
      const same = byEvent.get(event.id);
      if (same) same.entries.push(entry);
      else byEvent.set(event.id, { entries: [entry], event, data });
    }
    const ready = [...byEvent.values()];
    const claims = await claimEvents(redis, keys, ready.map((r) => r.event.id), consumer, opts.claimIdleMs);
    const published: string[] = [];
    for (const [i, r] of ready.entries()) {
      const claim = claims[i]!;
      if (claim.kind === 'busy') { deferred += r.entries.length; continue; }
      if (claim.kind === 'publish') {
        io.to(roomOf(r.data.trackingId)).except(claim.except).emit('payment', notification(r.data, clock.now()));
        io.of(MERCHANT_NAMESPACE).to(gatewayRoom(r.data.gateway)).emit('payment', notification(r.data, clock.now()));
        published.push(r.event.id);
        stats.emitted += 1;
        stats.duplicates += r.entries.length - 1;
      } else {
        stats.duplicates += r.entries.length;
      }
      done.push(...r.entries.map((e) => e.streamId));
    }
    await markPublished(adapter.pub, keys, published);
    await ack(redis, streamKeys.events, NOTIFIER_GROUP, done);
    // a re-read of the pending list sees every deferred entry again; a fresh batch adds its own
    loop.setPending(from === 'pending' ? deferred > 0 : loop.pending() || deferred > 0);
  }

  // deferred entries wait in this consumer's pending list, re-read at most every RETRY_PENDING_MS
  const loop = createConsumerLoop({ redis: reads, blockingRedis: blocking }, {
    stream: streamKeys.events, group: NOTIFIER_GROUP, consumer, batchSize: opts.batchSize, blockMs: opts.blockMs,
    claimIdleMs: opts.claimIdleMs, pendingEveryMs: RETRY_PENDING_MS, startPending: false, now: () => clock.now(),
  }, process);
  await loop.ensureGroup();
  // nothing unacknowledged is lost: it is read again from the pending list
  const running = loop.run(() => !stopping, (err) => log.warn({ err: err.message }, 'notifier step failed; retrying'));
  log.info({ consumer, sharded: config.ws.sharded }, 'notifier started');

  return {
    async stop() {
      stopping = true;
      await running;
      await io.of('/').adapter.close();
      await adapter.close();
      blocking.disconnect();
      reads.disconnect();
    },
    stats: () => ({ ...stats }),
  };
}
