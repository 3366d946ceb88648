/**
 * Real-time bench: 1,000 connected socket.io-client sockets on two API nodes,
 * 200 payments/s appended to the stream as the indexer appends them; latency from the
 * append to the receipt by every socket of the payment's trackingId (p50, p99). Baseline,
 * same machine, same run: a bare Socket.IO server (no adapter, no Redis) broadcasting
 * the same rate to rooms of the same sizes, measured from emit to receipt.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { io as connectIo, type Socket } from 'socket.io-client';
import { createTestEnv } from '../support/env.js';
import { startTestApi } from '../support/app.js';
import { appendTestEvents, makeEvent } from '../support/anchor-events.js';
import { realtimeAttachment } from '../../queries/realtime/attachment.js';
import { startNotifier } from '../../queries/realtime/notifier.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createLogger } from '../../infra/log/logger.js';
import type { PaymentNotification } from '../../queries/realtime/notification.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import { percentile, report } from './harness.js';

const CLIENTS = Number(process.env['BENCH_WS_CLIENTS'] ?? 1000);
const RATE = Number(process.env['BENCH_WS_RATE'] ?? 200);
const SECONDS = Number(process.env['BENCH_WS_SECONDS'] ?? 10);
const PER_ROOM = 5;
const ROOMS = Math.max(1, Math.floor(CLIENTS / PER_ROOM));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function connectAll(urls: readonly string[], onSocket: (s: Socket, i: number) => Promise<void>): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < CLIENTS; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, CLIENTS - i) }, async (_, k) => {
      const n = i + k;
      const s = connectIo(urls[n % urls.length] ?? '', { path: '/ws/v1', transports: ['websocket'], reconnection: false, forceNew: true });
      await new Promise<void>((resolve, reject) => { s.once('connect', () => resolve()); s.once('connect_error', reject); });
      sockets[n] = s;
      await onSocket(s, n);
    }));
  }
  return sockets;
}

/** Sends `RATE` items per second for SECONDS, in ticks of 10 ms, without drifting. */
async function paced(send: (i: number) => Promise<void>): Promise<number> {
  const total = RATE * SECONDS;
  const start = Date.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - start) / 1000) * RATE) + 1);
    const batch: Promise<void>[] = [];
    while (sent < due) batch.push(send(sent++));
    await Promise.all(batch);
    await sleep(10);
  }
  return total;
}

async function drain(received: () => number, expected: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (received() < expected && Date.now() < deadline) await sleep(50);
}

interface Lat { p50: number; p99: number; received: number; expected: number }

function summarize(lat: number[], expected: number): Lat {
  const sorted = [...lat].sort((x, y) => x - y);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), received: lat.length, expected };
}

async function bareBroadcast(): Promise<Lat> {
  const http = createServer();
  const io = new Server(http, { path: '/ws/v1', serveClient: false });
  io.on('connection', (s) => { s.on('subscribe', (m: { trackingId: string }, cb?: () => void) => { void s.join(`t:${m.trackingId}`); cb?.(); }); });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const sentAt = new Map<number, number>();
  const lat: number[] = [];
  const sockets = await connectAll([url], async (s, n) => {
    s.on('payment', (m: { seq: number }) => lat.push(Date.now() - sentAt.get(m.seq)!));
    await s.timeout(5000).emitWithAck('subscribe', { trackingId: `room-${n % ROOMS}` });
  });
  const total = await paced(async (i) => {
    sentAt.set(i, Date.now());
    io.to(`t:room-${i % ROOMS}`).emit('payment', { type: 'payment_notification', seq: i, timestamp: Date.now() });
  });
  await drain(() => lat.length, total * PER_ROOM);
  for (const s of sockets) s.disconnect();
  await io.close();
  return summarize(lat, total * PER_ROOM);
}

async function tributary(): Promise<Lat> {
  const env = await createTestEnv('bench_realtime');
  // every socket comes from this machine: the per-address cap is not what is measured
  const overrides = { LOG_LEVEL: 'silent', WS_MAX_CONNECTIONS_PER_TRACKING_ID: String(PER_ROOM * 2), WS_MAX_CONNECTIONS_PER_IP_PER_TRACKING_ID: String(PER_ROOM * 2) };
  const logger = createLogger('silent', 'bench');
  const nodes = [await startTestApi(env, overrides, { attachments: [realtimeAttachment()] }), await startTestApi(env, overrides, { attachments: [realtimeAttachment()] })];
  const config = loadConfig({ ...env.env, ...overrides });
  const notifier = await startNotifier({ config, dbRead: env.db, redis: env.redis, keys: env.keys, logger, clock: systemClock },
    { batchSize: 200, blockMs: 1000, claimIdleMs: 30_000 });
  try {
    const appendedAt = new Map<string, number>();
    const lat: number[] = [];
    const sockets = await connectAll(nodes.map((n) => n.url), async (s, n) => {
      s.on('payment', (m: PaymentNotification) => lat.push(Date.now() - appendedAt.get(m.data.signature)!));
      const r = (await s.timeout(5000).emitWithAck('subscribe', { trackingId: `room-${n % ROOMS}` })) as { ok: boolean };
      if (!r.ok) throw new Error('subscribe refused');
    });
    // events built ahead of time: the bench measures delivery, not Anchor encoding
    const events: TributaryEvent[] = Array.from({ length: RATE * SECONDS }, (_, i) =>
      makeEvent('PaymentRecord', { memo: `room-${i % ROOMS}`, record_id: i }, { seed: `bench-${i}`, slot: 10_000_000 + i }));
    const total = await paced(async (i) => {
      const e = events[i]!;
      appendedAt.set(e.signature, Date.now());
      await appendTestEvents(env, [e]);
    });
    await drain(() => lat.length, total * PER_ROOM);
    for (const s of sockets) s.disconnect();
    return summarize(lat, total * PER_ROOM);
  } finally {
    await notifier.stop();
    for (const n of nodes) await n.close();
    await env.close();
  }
}

export async function benchRealtime(): Promise<void> {
  process.stdout.write(`realtime: ${CLIENTS} sockets, ${RATE} payments/s for ${SECONDS} s, ${PER_ROOM} sockets per trackingId\n`);
  const base = await bareBroadcast();
  const ours = await tributary();
  report({ name: 'append → receipt p50 (2 nodes, notifier, Redis adapter)', value: ours.p50, unit: 'ms', baseline: { name: 'bare Socket.IO broadcast p50', value: Math.max(1, base.p50) }, higherIsBetter: false });
  report({ name: 'append → receipt p99', value: ours.p99, unit: 'ms', baseline: { name: 'bare Socket.IO broadcast p99', value: Math.max(1, base.p99) }, higherIsBetter: false });
  process.stdout.write(`    received ${ours.received}/${ours.expected} (bare: ${base.received}/${base.expected})\n`);
}
