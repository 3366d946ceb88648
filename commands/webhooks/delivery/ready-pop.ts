/**
 * The worker's side of the fast path (projections/webhooks/doc.ts): pops the events the
 * webhooks projection pushed after commit (LMPOP: each entry reaches one worker) and hands
 * their deliveries to the worker as if claimed, held by PUSH_HOLDER, so a first attempt
 * costs no claim. While it runs it says so in Redis (the projection pushes only then).
 *
 * An entry popped when its rows' lease no longer covers an attempt (timeout and half the
 * margin: the workers fell behind) costs what a claim costs: its rows are taken over by
 * id with a fresh lease, those still held by the fast path. Endpoint settings are read
 * for each pop (one query by primary key for the webhooks of all the entries popped), so a
 * rotated secret, a new URL, a deactivation or a receiver's pause since the event was
 * queued is seen: the rows of an endpoint deactivated or paused meanwhile are handed to
 * the claim at once (due now; the claim skips them while the endpoint is paused or inactive).
 */
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';
import { webhookPoppersKey, webhookReadyKey } from '../../../src/kernel/keys/index.js';
import { POPPERS_TTL_MS, PUSH_HOLDER, type ReadyEntry } from '../../../projections/webhooks/doc.js';
import { releaseLeases, takeOver, type ClaimedDelivery } from './outbox-store.js';

type Endpoint = Pick<ClaimedDelivery, 'endpoint_url' | 'secret' | 'previous_secret' | 'previous_secret_until' | 'rate_limit_per_second' | 'failing'>;

export interface FastPathDeps {
  db: Db;
  redis: Redis;
  prefix: string;
  logger: Logger;
  /** the worker's name, and the lease an attempt needs from its start (the timeout and half the margin) */
  worker: string;
  needMs: number;
  /** the lease of a claim, for rows taken over */
  claimLeaseMs: number;
  /** the lease asked of the projection for pushed rows: an attempt's, and time to wait in the list */
  pushLeaseMs: number;
  /** deliveries the worker can take now */
  room(): number;
  /** resolves when room may have freed */
  roomFreed(): Promise<void>;
  take(rows: ClaimedDelivery[]): void;
}

export interface FastPath { stop(): Promise<void> }

/** How long one blocking pop waits (seconds): also how long a stop waits for it. */
const POP_BLOCK_S = 0.25;

export function startFastPath(deps: FastPathDeps): FastPath {
  const readyKey = webhookReadyKey(deps.prefix);
  const poppersKey = webhookPoppersKey(deps.prefix);
  const blocking = deps.redis.duplicate();
  blocking.on('error', () => undefined); // reported by the pops that fail
  let stopped = false;
  let perEntry = 1;

  const say = () => { void deps.redis.set(poppersKey, String(deps.pushLeaseMs), 'PX', POPPERS_TTL_MS).catch(() => undefined); };
  say();
  const heartbeat = setInterval(say, POPPERS_TTL_MS / 3);

  /** The endpoints of the entries' webhooks that may be sent to now: active, not paused by a receiver. */
  async function endpointsOf(entries: readonly ReadyEntry[]): Promise<Map<number, Endpoint>> {
    const ids = [...new Set(entries.flatMap((e) => e.d.map(([, webhookId]) => webhookId)))];
    const { rows } = await sql<Endpoint & { id: number }>`
      SELECT id, endpoint_url, secret, previous_secret, previous_secret_until, rate_limit_per_second, (failing_since IS NOT NULL) AS failing
      FROM webhooks WHERE id = ANY (${ids}::integer[]) AND active AND (paused_until IS NULL OR paused_until <= now())`.execute(deps.db);
    return new Map(rows.map((r) => [r.id, r]));
  }

  function deliveriesOf(endpoints: Map<number, Endpoint>, e: ReadyEntry, holder: string): ClaimedDelivery[] {
    const out: ClaimedDelivery[] = [];
    for (const [id, webhookId] of e.d) {
      const w = endpoints.get(webhookId);
      if (!w) continue; // handed to the claim
      out.push({
        id, webhook_id: webhookId, event_id: e.e, event_name: e.n, payload_text: e.p, payload_timestamp: e.t,
        round: 0, attempts: 0, created_at: new Date(e.c), endpoint_url: w.endpoint_url, secret: w.secret,
        previous_secret: w.previous_secret, previous_secret_until: w.previous_secret_until,
        rate_limit_per_second: w.rate_limit_per_second, failing: w.failing, holder,
      });
    }
    return out;
  }

  const loop = (async () => {
    while (!stopped) {
      const room = deps.room();
      if (room <= 0) { await deps.roomFreed(); continue; }
      try {
        const count = Math.max(1, Math.floor(room / perEntry));
        const r = await blocking.blmpop(POP_BLOCK_S, 1, readyKey, 'LEFT', 'COUNT', count);
        if (!r) continue;
        const entries = r[1].map((s) => JSON.parse(s) as ReadyEntry);
        perEntry = Math.max(1, Math.round(entries.reduce((n, e) => n + e.d.length, 0) / entries.length));
        const endpoints = await endpointsOf(entries);
        const held = entries.flatMap((e) => e.d.filter(([, webhookId]) => !endpoints.has(webhookId)).map(([id]) => id));
        if (held.length > 0) await releaseLeases(deps.db, PUSH_HOLDER, held);
        const now = Date.now();
        const late = entries.filter((e) => e.u - now < deps.needMs);
        deps.take(entries.filter((e) => e.u - now >= deps.needMs).flatMap((e) => deliveriesOf(endpoints, e, PUSH_HOLDER)));
        if (late.length > 0) {
          const rows = late.flatMap((e) => deliveriesOf(endpoints, e, deps.worker));
          const taken = await takeOver(deps.db, deps.worker, PUSH_HOLDER, rows.map((r) => r.id), deps.claimLeaseMs);
          deps.take(rows.filter((r) => taken.has(r.id)));
        }
      } catch (err) {
        if (stopped) break;
        deps.logger.warn({ err: (err as Error).message }, 'popping pushed webhook deliveries failed; retrying (their rows wait for the claim)');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      clearInterval(heartbeat);
      await loop;
      blocking.disconnect();
    },
  };
}
