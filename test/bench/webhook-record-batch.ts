/**
 * What a webhook outcome write costs by its size (commands/webhooks/delivery/attempt-recorder.ts
 * groups them): BENCH_RECORD_ROWS (20,000) fan-out first attempts written by recordAttempts
 * in statements of 15, 60, 100 and 200, one at a time; CPU per record of this process
 * (the client) and of the test database's backends (read from /proc), each size against
 * statements of 15, the groups that formed before the recorder waited for more.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { createTestEnv } from '../support/env.js';
import { recordAttempts, type RecordItem } from '../../commands/webhooks/delivery/outbox-store.js';
import { report } from './harness.js';

const ROWS = Number(process.env['BENCH_RECORD_ROWS'] ?? 20_000);
const SIZES = [15, 60, 100, 200];

/** CPU ticks (user + system) of a process, in ms at 100 ticks a second. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

export async function benchWebhookRecordBatch(): Promise<void> {
  process.stdout.write(`webhook outcome writes by size: ${ROWS} first attempts each\n`);
  const env = await createTestEnv('bench_record_batch');
  try {
    const now = new Date();
    const hooks = await env.db.insertInto('webhooks')
      .values(Array.from({ length: 10 }, (_, i) => ({ gateway_pubkey: `g${i}`, gateway_account: `a${i}`, endpoint_url: `http://127.0.0.1:9/${i}`, secret: 's', created_at: now, updated_at: now })))
      .returning('id').execute();
    const backends = async () => (await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(env.db)).rows.map((r) => r.pid);
    const perRecord = new Map<number, number>();
    for (const size of [0, ...SIZES]) { // 0: a warm-up (plans, caches), in statements of 100, not reported
      const before = new Map((await backends()).map((p) => [p, cpuMs(p)]));
      const client = process.cpuUsage();
      const step = size || 100;
      for (let i = 0; i < ROWS; i += step) {
        const items: RecordItem[] = Array.from({ length: Math.min(step, ROWS - i) }, (_, j) => {
          const k = i + j;
          return {
            a: { deliveryId: '', webhookId: hooks[k % 10]!.id, eventId: `s${size}-${Math.floor(k / 10)}`, eventName: 'PaymentRecord', attempt: 1, attemptedAt: new Date(), statusCode: 200, latencyMs: 2, error: null, success: true, first: { createdAt: now } },
            next: { kind: 'delivered' }, holder: 'bench',
          };
        });
        await recordAttempts(env.db, items);
      }
      const c = process.cpuUsage(client);
      let server = 0;
      for (const p of await backends()) server += cpuMs(p) - (before.get(p) ?? cpuMs(p));
      if (size === 0) continue;
      perRecord.set(size, ((c.user + c.system) / 1000 + server) / ROWS * 1000);
      process.stdout.write(`    ${size} a statement: client ${((c.user + c.system) / ROWS).toFixed(1)} µs, Postgres ${(server / ROWS * 1000).toFixed(1)} µs a record\n`);
    }
    for (const size of SIZES.slice(1)) {
      report({ name: `CPU a record, statements of ${size}`, value: perRecord.get(size)!, unit: 'µs', baseline: { name: `statements of ${SIZES[0]}`, value: perRecord.get(SIZES[0]!)! }, higherIsBetter: false });
    }
  } finally {
    await env.close();
  }
}
