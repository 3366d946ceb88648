/**
 * The client protocol of one socket:
 *
 *   → subscribe   {trackingId, since?}   ← ack {action: "subscribe", trackingId, since?}
 *                                          then, with since: payment… and caught_up {trackingId, sent, more, complete}
 *   → unsubscribe {trackingId}           ← ack {action: "unsubscribe", trackingId}
 *   ← payment     (notification.ts)
 *   ← error       {code, message, trackingId?}
 *
 * Error codes: invalid_payload, invalid_tracking_id, invalid_since, unknown_since,
 * too_many_connections (the trackingId's cap across all nodes is reached, this client
 * address holds its share of it (WS_MAX_CONNECTIONS_PER_IP_PER_TRACKING_ID), or a lease
 * was lost and could not be taken back), too_many_subscriptions (per socket), rate_limited
 * (more messages or catch-ups than the connection's budget), unavailable.
 * A client passing an acknowledgement callback gets the ack or the error through it too.
 * A subscribe's ack comes once the subscription is in force: every payment published after
 * it reaches the socket.
 */
import type { Socket } from 'socket.io';
import type { Logger } from '../../infra/log/logger.js';
import { roomOf } from './keys.js';
import { paymentKey, type PaymentNotification } from './notification.js';
import { checkTrackingId } from './tracking-id.js';
import { describeSince, parseSince, type Since } from './since.js';
import type { SlotLeases } from './slots.js';
import { catchUp, UnknownSinceError, type CatchUpDeps } from './catch-up.js';

/** Guards Redis and the node against one socket holding thousands of leases. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 100;

export interface Subscription {
  trackingId: string;
  active: boolean;
  /** the connection slot is taken (renewals skip a subscription still asking for one) */
  held: boolean;
  /** while catching up: the payments handed to the socket (live or catch-up) */
  seen: Set<string> | null;
  /** the last RECENT_KEPT payments handed to the socket: a resync does not send them again */
  recent: Set<string>;
}

const RECENT_KEPT = 256;

export interface SocketState {
  socket: Socket;
  subs: Map<string, Subscription>;
  /** the client address its slots are counted under (an IPv4 address or an IPv6 /64) */
  client: string;
  /** catch-ups asked for in the current minute: each is a read-model query */
  catchUps: { windowStart: number; count: number };
}

export interface ProtocolDeps {
  leases: SlotLeases;
  catchUp: CatchUpDeps;
  logger: Logger;
  /** catch-ups (subscribe with since) one connection may ask for per minute */
  maxCatchUpsPerMinute: number;
  now: () => number;
}

/** Counts one catch-up against the connection's budget; false when it is spent. */
function takeCatchUp(deps: ProtocolDeps, state: SocketState): boolean {
  const now = deps.now();
  if (now - state.catchUps.windowStart >= 60_000) state.catchUps = { windowStart: now, count: 0 };
  if (state.catchUps.count >= deps.maxCatchUpsPerMinute) return false;
  state.catchUps.count += 1;
  return true;
}

const catchUpLimited = (deps: ProtocolDeps, trackingId: string): ErrorBody => ({
  code: 'rate_limited', message: `at most ${deps.maxCatchUpsPerMinute} catch-ups (subscribe with since) per minute per connection`, trackingId,
});

export interface ErrorBody { code: string; message: string; trackingId?: string }

type Reply = ((body: unknown) => void) | undefined;

function fail(state: SocketState, reply: Reply, body: ErrorBody): void {
  state.socket.emit('error', body);
  reply?.({ ok: false, error: body });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function runCatchUp(deps: ProtocolDeps, state: SocketState, sub: Subscription, since: Since): Promise<void> {
  sub.seen ??= new Set();
  try {
    const r = await catchUp(deps.catchUp, state.socket, sub.trackingId, since, sub.seen, () => sub.active && state.socket.connected);
    if (sub.active) state.socket.emit('caught_up', { trackingId: sub.trackingId, ...r });
  } catch (err) {
    if (err instanceof UnknownSinceError) {
      fail(state, undefined, { code: 'unknown_since', message: err.message, trackingId: sub.trackingId });
    } else {
      deps.logger.warn({ err: (err as Error).message, trackingId: sub.trackingId }, 'catch-up failed');
      fail(state, undefined, { code: 'unavailable', message: 'catch-up failed; subscribe again with since', trackingId: sub.trackingId });
    }
  } finally {
    sub.seen = null;
  }
}

/**
 * Waits until the room's subscription on this node is in force, so that an ack promises
 * every payment published after it. The sharded adapter sends SSUBSCRIBE for a room new to
 * the node without waiting for it, and a second socket joining that room meanwhile finds it
 * existing: every subscribe waits. The barrier fails only when the subscriber connection
 * does (commands otherwise wait out an outage); the ack still goes: lease and room are held,
 * and the adapter's resubscription catches every subscription up (onResubscribed, resync),
 * as it does for the sockets acked before the loss. Answering unavailable would only make
 * the client retry against the same connection.
 */
async function inForce(deps: ProtocolDeps, trackingId: string): Promise<void> {
  await deps.catchUp.barrier().catch((err: Error) =>
    deps.logger.warn({ err: err.message, trackingId }, 'adapter barrier failed; acking, the resync after resubscription covers the gap'));
}

export async function subscribe(deps: ProtocolDeps, state: SocketState, payload: unknown, reply: Reply): Promise<void> {
  if (!isRecord(payload)) return fail(state, reply, { code: 'invalid_payload', message: 'subscribe takes an object {trackingId, since?}' });
  const tid = checkTrackingId(payload['trackingId']);
  if (!tid.ok) return fail(state, reply, { code: 'invalid_tracking_id', message: tid.message });
  const trackingId = tid.value;
  let since: Since | undefined;
  if (payload['since'] !== undefined && payload['since'] !== null) {
    const s = parseSince(payload['since']);
    if (!s.ok) return fail(state, reply, { code: 'invalid_since', message: s.message, trackingId });
    since = s.value;
  }
  if (since && !takeCatchUp(deps, state)) return fail(state, reply, catchUpLimited(deps, trackingId));
  const ackBody = { action: 'subscribe', trackingId, ...(since ? { since: describeSince(since) } : {}) };
  const existing = state.subs.get(trackingId);
  if (existing) {
    state.socket.emit('ack', ackBody);
    reply?.({ ok: true, ...ackBody });
    // a repeated subscribe with since asks for catch-up again (unless one is running)
    if (since && existing.seen === null) await runCatchUp(deps, state, existing, since);
    return;
  }
  if (state.subs.size >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
    return fail(state, reply, { code: 'too_many_subscriptions', message: `a socket may follow at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} trackingIds`, trackingId });
  }
  // registered before any await, so that a concurrent subscribe or a disconnect sees it
  const sub: Subscription = { trackingId, active: true, held: false, seen: since ? new Set() : null, recent: new Set() };
  state.subs.set(trackingId, sub);
  let slot;
  try {
    slot = await deps.leases.acquire(trackingId, state.socket.id, state.client);
  } catch (err) {
    state.subs.delete(trackingId);
    deps.logger.warn({ err: (err as Error).message }, 'connection slot lease failed');
    return fail(state, reply, { code: 'unavailable', message: 'subscription service unavailable, retry', trackingId });
  }
  if (slot !== 'held') {
    state.subs.delete(trackingId);
    const message = slot === 'full' ? 'too many connections for this trackingId' : 'too many connections for this trackingId from this address';
    return fail(state, reply, { code: 'too_many_connections', message, trackingId });
  }
  sub.held = true;
  if (!sub.active || !state.socket.connected) {
    // unsubscribed or gone while the lease was taken: give it back
    await deps.leases.release([{ trackingId, socketId: state.socket.id, client: state.client }]).catch(() => undefined);
    return;
  }
  await state.socket.join(roomOf(trackingId));
  await inForce(deps, trackingId);
  state.socket.emit('ack', ackBody);
  reply?.({ ok: true, ...ackBody });
  if (since) await runCatchUp(deps, state, sub, since);
}

export async function unsubscribe(deps: ProtocolDeps, state: SocketState, payload: unknown, reply: Reply): Promise<void> {
  const tid = checkTrackingId(isRecord(payload) ? payload['trackingId'] : undefined);
  if (!tid.ok) return fail(state, reply, { code: 'invalid_tracking_id', message: tid.message });
  const trackingId = tid.value;
  const sub = state.subs.get(trackingId);
  if (sub) {
    sub.active = false;
    state.subs.delete(trackingId);
    await state.socket.leave(roomOf(trackingId));
    await deps.leases.release([{ trackingId, socketId: state.socket.id, client: state.client }]).catch((err: Error) =>
      deps.logger.warn({ err: err.message }, 'slot release failed; the lease expires by itself'));
  }
  const body = { action: 'unsubscribe', trackingId };
  state.socket.emit('ack', body);
  reply?.({ ok: true, ...body });
}

/** Everything a socket held, when it goes. */
export async function dropSocket(deps: ProtocolDeps, state: SocketState): Promise<void> {
  const held = [...state.subs.values()].map((s) => { s.active = false; return { trackingId: s.trackingId, socketId: state.socket.id, client: state.client }; });
  state.subs.clear();
  await deps.leases.release(held).catch((err: Error) => deps.logger.warn({ err: err.message }, 'slot release failed; the leases expire by themselves'));
}

/** Records what the live side hands a catching-up socket (broadcasts included). */
export function recordOutgoing(state: SocketState, event: string, msg: unknown): void {
  if (event !== 'payment') return;
  const data = (msg as Partial<PaymentNotification> | undefined)?.data;
  if (!data) return;
  const sub = state.subs.get(data.trackingId);
  if (!sub) return;
  const key = paymentKey(data);
  sub.seen?.add(key);
  sub.recent.add(key);
  if (sub.recent.size > RECENT_KEPT) sub.recent.delete(sub.recent.values().next().value!);
}

/**
 * Catch-up again for a subscription whose live broadcasts may have been lost (the node's
 * adapter lost its subscriber connection): from `since`, leaving out what the socket got
 * lately. Skipped while a catch-up of it is running (that one reads the same model).
 */
export async function resync(deps: ProtocolDeps, state: SocketState, sub: Subscription, since: Since): Promise<void> {
  if (!sub.active || !sub.held || sub.seen !== null || !state.socket.connected) return;
  sub.seen = new Set(sub.recent);
  await runCatchUp(deps, state, sub, since);
}

export function isReply(v: unknown): v is (body: unknown) => void {
  return typeof v === 'function';
}
