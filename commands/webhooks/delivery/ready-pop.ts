/**
 * The worker's side of the fast path (src/kernel/wire/webhook-ready.ts): pops the events the
 * webhooks projection pushed after commit (LMPOP: each entry reaches one worker) and hands
 * their deliveries to the worker as if claimed, unwritten and held by their fan-out row
 * (./fanouts.ts), so a first attempt costs no claim and no outbox row until its outcome.
 * While it runs it says so in Redis (the projection pushes only then).
 *
 * An entry popped when its fan-out's lease no longer covers an attempt (timeout and half
 * the margin: the workers fell behind) has the lease extended, if the fan-out was not
 * expanded meanwhile. Endpoint settings are read for each pop (one query by primary key
 * for the webhooks of all the entries popped), so a rotated secret, a new URL, a
 * deactivation, a receiver's pause, a rate limit or ordering set since the event was
 * queued is seen: the deliveries of such an endpoint are handed to the claim at once (due
 * now; the claim skips them while the endpoint is paused or inactive).
 */
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Db } from '../../../infra/postgres/database.js';
import type { Logger } from '../../../infra/log/logger.js';
import { webhookPoppersKey, webhookReadyKey } from '../../../src/kernel/names/index.js';
import { POPPERS_TTL_MS, type ReadyEntry } from '../../../src/kernel/wire/webhook-ready.js';
import type { ClaimedDelivery } from './outbox-store.js';
import { claimedBody } from './deliver.js';
import { extendFanouts, handToClaim, holdFanout, type Unattempted } from './fanouts.js';

type Endpoint = Pick<ClaimedDelivery, 'endpoint_url' | 'secret' | 'previous_secret' | 'previous_secret_until' | 'rate_limit_per_second' | 'failing'>;

export interface FastPathDeps {
  db: Db;
  redis: Redis;
  prefix: string;
  logger: Logger;
  /** the lease an attempt needs from its start (the timeout and half the margin) */
  needMs: number;
  /** the lease of a claim, for fan-outs popped late */
  claimLeaseMs: number;
  /** a fan-out's deliveries are all written */
  fanoutDone(id: string): void;
  /** deliveries were handed to the claim (due now) */
  handedToClaim(): void;
  /** the lease asked of the projection for pushed rows: an attempt's, and time to wait in the list */
  pushLeaseMs: number;
  /** deliveries the worker can take now */
  room(): number;
  /**
   * the room a pop waits for while the worker has deliveries waiting for a slot (1: pop at
   * any room): each pop costs a round trip to Redis and a query of the endpoints, so under
   * load a pop takes several events instead of one per slot that frees
   */
  popRoom?: number;
  /** the worker is about to run out of deliveries: pop at any room */
  starving?(): boolean;
  /** resolves when room may have freed */
  roomFreed(): Promise<void>;
  take(rows: ClaimedDelivery[]): void;
}

/** Cumulative counts since the start, for the worker's gauges: pops that took entries, the entries, and the time (ms) spent waiting for room, in the blocking pop, and between a pop's answer and its hand-over. */
export interface FastPathCounts { pops: number; entries: number; roomWaitMs: number; popMs: number; prepMs: number }

export interface FastPath { stop(): Promise<void>; counts(): FastPathCounts }

/** How long one blocking pop waits (seconds): also how long a stop waits for it. */
const POP_BLOCK_S = 0.25;

export function startFastPath(deps: FastPathDeps): FastPath {
  const readyKey = webhookReadyKey(deps.prefix);
  const poppersKey = webhookPoppersKey(deps.prefix);
  // a blocking command is sent alone anyway: no auto-pipelining (an immediate and a pipeline for each pop)
  const blocking = deps.redis.duplicate({ enableAutoPipelining: false });
  blocking.on('error', () => undefined); // reported by the pops that fail
  let stopped = false;
  let perEntry = 1;
  const counts: FastPathCounts = { pops: 0, entries: 0, roomWaitMs: 0, popMs: 0, prepMs: 0 };

  const say = () => { void deps.redis.set(poppersKey, String(deps.pushLeaseMs), 'PX', POPPERS_TTL_MS).catch(() => undefined); };
  say();
  const heartbeat = setInterval(say, POPPERS_TTL_MS / 3);

  /** The endpoints of the entries' webhooks that may be sent to now: active, not paused by a receiver, neither ordered nor rate limited. */
  async function endpointsOf(entries: readonly ReadyEntry[]): Promise<Map<number, Endpoint>> {
    const ids = [...new Set(entries.flatMap((e) => e.w))];
    const { rows } = await sql<Endpoint & { id: number }>`
      SELECT id, endpoint_url, secret, previous_secret, previous_secret_until, rate_limit_per_second, (failing_since IS NOT NULL) AS failing
      FROM webhooks WHERE id = ANY (${ids}::integer[]) AND active AND (paused_until IS NULL OR paused_until <= now())
        AND NOT ordered AND rate_limit_per_second IS NULL`.execute(deps.db);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * The entry's deliveries to attempt here, held by its fan-out; the others go to `toClaim`,
   * and the fan-out to `claimedAll` when none is left here.
   */
  function deliveriesOf(endpoints: Map<number, Endpoint>, e: ReadyEntry, toClaim: Unattempted[], claimedAll: string[]): ClaimedDelivery[] {
    const out: ClaimedDelivery[] = [];
    const created = new Date(e.c);
    let body: Buffer | undefined; // encoded once for all the event's webhooks
    for (const webhookId of e.w) {
      const w = endpoints.get(webhookId);
      if (!w) {
        toClaim.push({ webhook_id: webhookId, event_id: e.e, event_name: e.n, created_at: created });
        continue;
      }
      const d: ClaimedDelivery = {
        id: '', webhook_id: webhookId, event_id: e.e, event_name: e.n, payload_text: e.p, payload_timestamp: e.t,
        round: 0, attempts: 0, created_at: created, endpoint_url: w.endpoint_url, secret: w.secret,
        previous_secret: w.previous_secret, previous_secret_until: w.previous_secret_until,
        rate_limit_per_second: w.rate_limit_per_second, failing: w.failing,
      };
      d.body = body ??= Buffer.from(claimedBody(d));
      out.push(d);
    }
    if (out.length === 0) {
      claimedAll.push(e.f);
    } else {
      const hold = holdFanout(e.f, out.length, (f) => deps.fanoutDone(f));
      for (const d of out) d.fanout = hold;
    }
    return out;
  }

  const loop = (async () => {
    while (!stopped) {
      const room = deps.room();
      if (room <= 0 || (room < (deps.popRoom ?? 1) && deps.starving?.() === false)) {
        const t = performance.now();
        await deps.roomFreed();
        counts.roomWaitMs += performance.now() - t;
        continue;
      }
      try {
        const count = Math.max(1, Math.floor(room / perEntry));
        const t0 = performance.now();
        const r = await blocking.blmpop(POP_BLOCK_S, 1, readyKey, 'LEFT', 'COUNT', count);
        const t1 = performance.now();
        counts.popMs += t1 - t0;
        if (!r) continue;
        counts.pops += 1;
        counts.entries += r[1].length;
        // entries of an older format (no fan-out) are left to the claim: their rows were written
        const popped = r[1].map((s) => JSON.parse(s) as ReadyEntry).filter((e) => typeof e.f === 'string' && Array.isArray(e.w));
        if (popped.length === 0) continue;
        perEntry = Math.max(1, Math.round(popped.reduce((n, e) => n + e.w.length, 0) / popped.length));
        const now = Date.now();
        const late = popped.filter((e) => e.u - now < deps.needMs);
        const kept = late.length === 0 ? undefined : await extendFanouts(deps.db, late.map((e) => e.f), deps.claimLeaseMs);
        // a late fan-out no longer there was expanded: its rows are the claim's
        const entries = kept === undefined ? popped : popped.filter((e) => e.u - now >= deps.needMs || kept.has(e.f));
        if (entries.length === 0) continue;
        const endpoints = await endpointsOf(entries);
        const toClaim: Unattempted[] = [];
        const claimedAll: string[] = [];
        const rows = entries.flatMap((e) => deliveriesOf(endpoints, e, toClaim, claimedAll));
        if (toClaim.length > 0) {
          await handToClaim(deps.db, toClaim);
          deps.handedToClaim();
        }
        for (const f of claimedAll) deps.fanoutDone(f);
        deps.take(rows);
        counts.prepMs += performance.now() - t1;
      } catch (err) {
        if (stopped) break;
        deps.logger.warn({ err: (err as Error).message }, 'popping pushed webhook deliveries failed; retrying (their fan-outs wait for the expansion)');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();

  return {
    counts: () => ({ ...counts }),
    async stop() {
      stopped = true;
      clearInterval(heartbeat);
      await loop;
      blocking.disconnect();
    },
  };
}
