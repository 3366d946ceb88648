/**
 * Socket.IO clients of the soak, through nginx: each from its own loopback address
 * (127.0.x.y, so nginx's hash-by-address affinity spreads them over the API nodes),
 * following a few trackingIds of the workload with `since: 0`. socket.io-client
 * reconnects on its own after a node dies; every (re)connection subscribes again with
 * since, so catch-up hands over what was missed while away.
 */
import { io, type Socket } from 'socket.io-client';
import type { PaymentNotification } from '../../queries/realtime/notification.js';

export interface SoakClient {
  socket: Socket;
  trackingIds: string[];
  /** payment key (signature:recordId) → times received, per trackingId */
  received: Map<string, Map<string, number>>;
  connects: number;
  subscribeErrors: number;
  incompleteCatchUps: number;
  /** server `error` events by code, and failed (re)connection attempts */
  errors: Map<string, number>;
}

export interface SoakClients {
  clients: SoakClient[];
  connected(): number;
  totals(): { connects: number; reconnects: number; payments: number; duplicates: number; subscribeErrors: number; incompleteCatchUps: number; errors: Record<string, number> };
  close(): void;
}

/** trackingIds trk-<n> spread over the counter range the workload will reach, each followed by `perId` clients. */
export function followedIds(count: number, span: number): string[] {
  const stride = Math.max(1, span / count);
  return Array.from({ length: count }, (_, j) => `trk-${1 + Math.floor(j * stride)}`);
}

function loopbackAddress(i: number): string {
  return `127.0.${1 + Math.floor(i / 250)}.${2 + (i % 250)}`;
}

async function subscribeAll(c: SoakClient): Promise<void> {
  for (const trackingId of c.trackingIds) {
    try {
      const ack = await c.socket.timeout(20_000).emitWithAck('subscribe', { trackingId, since: 0 }) as { ok: boolean };
      if (!ack.ok) c.subscribeErrors += 1;
    } catch {
      c.subscribeErrors += 1;
    }
  }
}

export async function connectClients(url: string, ids: readonly string[], count: number, perClient: number): Promise<SoakClients> {
  const clients: SoakClient[] = [];
  for (let i = 0; i < count; i += 1) {
    const trackingIds = Array.from({ length: perClient }, (_, k) => ids[(i * perClient + k) % ids.length]!);
    const socket = io(url, {
      path: '/ws/v1', transports: ['websocket'], reconnection: true, reconnectionDelay: 500, reconnectionDelayMax: 3000,
      timeout: 20_000, forceNew: true,
      // engine.io-client hands localAddress to the ws connection (Node only)
      ...({ localAddress: loopbackAddress(i) } as object),
    });
    const c: SoakClient = { socket, trackingIds, received: new Map(trackingIds.map((t) => [t, new Map()])), connects: 0, subscribeErrors: 0, incompleteCatchUps: 0, errors: new Map() };
    socket.on('connect', () => { c.connects += 1; void subscribeAll(c); });
    socket.on('payment', (m: PaymentNotification) => {
      const per = c.received.get(m.data.trackingId);
      if (!per) return;
      const key = `${m.data.signature}:${m.data.recordId}`;
      per.set(key, (per.get(key) ?? 0) + 1);
    });
    const count = (code: string) => c.errors.set(code, (c.errors.get(code) ?? 0) + 1);
    socket.on('error', (e: { code?: string; trackingId?: string }) => {
      count(e.code ?? 'error');
      // a catch-up the service could not finish is asked for again, as the protocol says (docs/interfaces.md)
      const again = e.trackingId;
      if (e.code === 'unavailable' && again !== undefined && c.trackingIds.includes(again)) {
        setTimeout(() => {
          if (!socket.connected) return; // a reconnect subscribes everything again
          socket.timeout(20_000).emitWithAck('subscribe', { trackingId: again, since: 0 }).then(
            (ack: { ok: boolean }) => { if (!ack.ok) c.subscribeErrors += 1; }, () => { c.subscribeErrors += 1; });
        }, 1000);
      }
    });
    socket.io.on('reconnect_error', () => count('reconnect_error'));
    socket.on('caught_up', (m: { more: boolean; complete?: boolean }) => { if (m.more || m.complete === false) c.incompleteCatchUps += 1; });
    clients.push(c);
    // a gentle ramp: 500 handshakes at once would be a test of their own
    if (i % 25 === 24) await new Promise((r) => setTimeout(r, 100));
  }
  return {
    clients,
    connected: () => clients.filter((c) => c.socket.connected).length,
    totals() {
      let payments = 0;
      let duplicates = 0;
      for (const c of clients) for (const per of c.received.values()) for (const n of per.values()) { payments += 1; duplicates += n - 1; }
      const connects = clients.reduce((a, c) => a + c.connects, 0);
      const errors: Record<string, number> = {};
      for (const c of clients) for (const [k, n] of c.errors) errors[k] = (errors[k] ?? 0) + n;
      return {
        connects, reconnects: connects - clients.filter((c) => c.connects > 0).length, payments, duplicates,
        subscribeErrors: clients.reduce((a, c) => a + c.subscribeErrors, 0), incompleteCatchUps: clients.reduce((a, c) => a + c.incompleteCatchUps, 0), errors,
      };
    },
    close() { for (const c of clients) c.socket.disconnect(); },
  };
}
