/**
 * Redis Cluster bench: the spine on a private 3-master cluster (3 replicas, AOF every
 * second) against one private redis-server with the same settings, the same run: guarded
 * appends of payments in batches as the indexer writes them (events/s), the payments
 * projection catching up on them (events/s), and Socket.IO append → receipt through the
 * sharded adapter on two API nodes (p50, p99) against one node's sharded adapter. On one
 * 2-core machine the cluster cannot add cores: the goal is to lose little (≥ 0.8).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { io as connectIo, type Socket } from 'socket.io-client';
import { makeEvent } from '../support/anchor-events.js';
import {
  clusterRedisSettings, createRedisTestEnv, startPaymentsProjector, startRealtimeNodes, startTestRedisCluster, type RedisTestEnv,
} from '../support/redis-cluster.js';
import { freeClusterPorts } from '../../infra/cluster/redis-cluster.js';
import { startRedisServer, waitRedisReady } from '../../infra/cluster/redis.js';
import { appendSerialized } from '../../infra/redis/event-stream.js';
import { cursorKey } from '../../src/kernel/names/index.js';
import { serializeEvent, type SerializedEvent } from '../../src/kernel/events/envelope.js';
import type { PaymentNotification } from '../../queries/realtime/notification.js';
import { percentile, report } from './harness.js';

const N = Number(process.env['BENCH_RC_EVENTS'] ?? 20_000);
const BATCH = 200;
const WS_CLIENTS = Number(process.env['BENCH_RC_WS_CLIENTS'] ?? 400);
const WS_RATE = Number(process.env['BENCH_RC_WS_RATE'] ?? 100);
const WS_SECONDS = Number(process.env['BENCH_RC_WS_SECONDS'] ?? 10);
const PER_ROOM = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function spine(env: RedisTestEnv): Promise<{ append: number; project: number }> {
  const events: SerializedEvent[] = Array.from({ length: N }, (_, i) =>
    makeEvent('PaymentRecord', { memo: `rc-${i % 500}`, record_id: i }, { seed: `rc-${i}`, slot: 20_000_000 + i })).map((e) => ({ id: e.id, payload: serializeEvent(e) }));
  const key = cursorKey(env.prefix);
  let t = Date.now();
  for (let b = 0; b * BATCH < N; b += 1) {
    const r = await appendSerialized(env.redis, env.keys, events.slice(b * BATCH, (b + 1) * BATCH),
      { key, value: `c${b}`, expect: b === 0 ? { stored: null, lastEntryId: '' } : { stored: `c${b - 1}` } });
    if (r.refused) throw new Error('append refused');
  }
  const append = N / ((Date.now() - t) / 1000);
  t = Date.now();
  const p = startPaymentsProjector(env, { batchSize: 1000, blockMs: 200, maxAttempts: 3, claimIdleMs: 30_000 });
  const rows = async () => Number((await env.db.selectFrom('payments').select((q) => q.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  while ((await rows()) < N) await sleep(50);
  const project = N / ((Date.now() - t) / 1000);
  await p.stop();
  return { append, project };
}

async function realtime(env: RedisTestEnv): Promise<{ p50: number; p99: number; received: number; expected: number }> {
  const overrides = { LOG_LEVEL: 'silent', WS_SHARDED_ADAPTER: 'true', WS_MAX_CONNECTIONS_PER_TRACKING_ID: String(PER_ROOM * 2), WS_MAX_CONNECTIONS_PER_IP_PER_TRACKING_ID: String(PER_ROOM * 2) };
  const running = await startRealtimeNodes(env, { overrides, notifier: { batchSize: 200, blockMs: 1000, claimIdleMs: 30_000 } });
  const { nodes } = running;
  const rooms = Math.max(1, Math.floor(WS_CLIENTS / PER_ROOM));
  const appendedAt = new Map<string, number>();
  const lat: number[] = [];
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < WS_CLIENTS; i += 1) {
      const s = connectIo(nodes[i % 2]!.url, { path: '/ws/v1', transports: ['websocket'], reconnection: false, forceNew: true });
      await new Promise<void>((resolve, reject) => { s.once('connect', () => resolve()); s.once('connect_error', reject); });
      s.on('payment', (m: PaymentNotification) => lat.push(Date.now() - appendedAt.get(m.data.signature)!));
      const r = (await s.timeout(5000).emitWithAck('subscribe', { trackingId: `room-${i % rooms}` })) as { ok: boolean };
      if (!r.ok) throw new Error('subscribe refused');
      sockets.push(s);
    }
    const total = WS_RATE * WS_SECONDS;
    const events = Array.from({ length: total }, (_, i) => makeEvent('PaymentRecord', { memo: `room-${i % rooms}`, record_id: i }, { seed: `rt-${i}`, slot: 30_000_000 + i }));
    const start = Date.now();
    for (let i = 0; i < total; i += 1) {
      while (Date.now() - start < (i / WS_RATE) * 1000) await sleep(2);
      appendedAt.set(events[i]!.signature, Date.now());
      await appendSerialized(env.redis, env.keys, [{ id: events[i]!.id, payload: serializeEvent(events[i]!) }]);
    }
    const deadline = Date.now() + 15_000;
    while (lat.length < total * PER_ROOM && Date.now() < deadline) await sleep(50);
    const sorted = [...lat].sort((x, y) => x - y);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), received: lat.length, expected: total * PER_ROOM };
  } finally {
    for (const s of sockets) s.disconnect();
    await running.close();
  }
}

export async function benchRedisCluster(): Promise<void> {
  process.stdout.write(`redis-cluster: ${N} payments appended in guarded batches of ${BATCH}, then projected; ${WS_CLIENTS} sockets, ${WS_RATE} payments/s for ${WS_SECONDS} s\n`);
  const dir = mkdtempSync(path.join(tmpdir(), 'tributary-bench-rc-'));
  const [port] = await freeClusterPorts(1);
  const single = startRedisServer({ name: 'redis', port: port!, dir: path.join(dir, 'single'), logFile: path.join(dir, 'single.log') });
  // production's settings: a node failed after 5 s silent, the append-only file synced every second
  const cluster = await startTestRedisCluster({ nodeTimeoutMs: 5000, appendfsync: 'everysec' });
  try {
    await waitRedisReady(port!, 15_000);
    const one = await createRedisTestEnv('bench_rc_one', { url: `redis://127.0.0.1:${port}`, sentinels: [], sentinelName: '' });
    const many = await createRedisTestEnv('bench_rc_cluster', clusterRedisSettings(cluster.nodes));
    try {
      const s1 = await spine(one);
      const sc = await spine(many);
      report({ name: 'guarded append on the 3-master cluster', value: sc.append, unit: 'events/s', baseline: { name: 'one Redis', value: s1.append }, goal: 0.8 });
      report({ name: 'payments projection on the cluster', value: sc.project, unit: 'events/s', baseline: { name: 'one Redis', value: s1.project }, goal: 0.8 });
      const r1 = await realtime(one);
      const rc = await realtime(many);
      report({ name: 'append → receipt p50, sharded adapter on the cluster', value: rc.p50, unit: 'ms', baseline: { name: 'one Redis, sharded adapter', value: Math.max(1, r1.p50) }, higherIsBetter: false });
      report({ name: 'append → receipt p99, sharded adapter on the cluster', value: rc.p99, unit: 'ms', baseline: { name: 'one Redis, sharded adapter', value: Math.max(1, r1.p99) }, higherIsBetter: false });
      process.stdout.write(`    received ${rc.received}/${rc.expected} (one Redis: ${r1.received}/${r1.expected})\n`);
    } finally {
      await one.close();
      await many.close();
    }
  } finally {
    await cluster.close();
    await single.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
