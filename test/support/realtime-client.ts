/** A real socket.io-client on /ws/v1 that records what the server sends, for tests and the bench. */
import { io, type Socket } from 'socket.io-client';
import type { PaymentNotification } from '../../queries/realtime/notification.js';
import { waitFor } from './process.js';
import { makeEvent } from './anchor-events.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';

let seq = 0;

/** A PaymentRecord of a trackingId (its memo), each with its own transaction and slot. */
export function payment(trackingId: string, over: Record<string, unknown> = {}, blockTime = Math.floor(Date.now() / 1000)): TributaryEvent {
  seq += 1;
  return makeEvent('PaymentRecord', { memo: trackingId, timestamp: String(blockTime), amount: String(1000 + seq), record_id: seq, ...over },
    { seed: `rt-${seq}-${Math.random()}`, slot: 1_000_000 + seq, blockTime });
}

export interface Reply { ok: boolean; error?: { code: string; message: string }; [k: string]: unknown }

export interface TestClient {
  socket: Socket;
  payments: PaymentNotification[];
  errors: { code: string; message: string; trackingId?: string }[];
  caughtUp: { trackingId: string; sent: number; more: boolean; complete: boolean }[];
  subscribe(trackingId: unknown, since?: unknown): Promise<Reply>;
  unsubscribe(trackingId: unknown): Promise<Reply>;
  /** waits until at least n payments arrived (then a little longer, to catch duplicates) */
  waitPayments(n: number, timeoutMs?: number, settleMs?: number): Promise<PaymentNotification[]>;
  close(): void;
}

export async function connectClient(url: string, timeoutMs = 5000): Promise<TestClient> {
  const socket = io(url, { path: '/ws/v1', transports: ['websocket'], reconnection: false, forceNew: true });
  const client: TestClient = {
    socket,
    payments: [],
    errors: [],
    caughtUp: [],
    subscribe: (trackingId, since) => socket.timeout(timeoutMs).emitWithAck('subscribe', since === undefined ? { trackingId } : { trackingId, since }) as Promise<Reply>,
    unsubscribe: (trackingId) => socket.timeout(timeoutMs).emitWithAck('unsubscribe', { trackingId }) as Promise<Reply>,
    async waitPayments(n, wait = 10_000, settleMs = 300) {
      await waitFor(async () => client.payments.length >= n, wait, `${n} payments (got ${client.payments.length})`);
      await new Promise((r) => setTimeout(r, settleMs));
      return client.payments;
    },
    close: () => { socket.disconnect(); },
  };
  socket.on('payment', (m: PaymentNotification) => client.payments.push(m));
  socket.on('error', (e: { code: string; message: string }) => client.errors.push(e));
  socket.on('caught_up', (c: { trackingId: string; sent: number; more: boolean; complete: boolean }) => client.caughtUp.push(c));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`socket.io connect to ${url} timed out`)), timeoutMs);
    socket.once('connect', () => { clearTimeout(t); resolve(); });
    socket.once('connect_error', (err) => { clearTimeout(t); reject(err); });
  });
  return client;
}
