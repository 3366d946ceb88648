/**
 * Drawing requests from a prepaid credit. The credit's use is counted in Redis, shared by
 * every API node, with the pay-as-you-go script (metering.ts): one atomic check-and-add,
 * so nodes racing on one credit can never together draw more than it holds.
 *
 * With a ledger (Postgres, ledger.ts) each request admitted is written there with the slice
 * of the credit it holds (../meter-slices.ts), before the response leaves; no two requests
 * hold overlapping slices of one credit, so the requests admitted never cost more than the
 * credit, whatever Redis holds. A counter Redis lost (a restart, or the idle expiry below) is
 * rebuilt from the end of the ledger's highest slice; one restored from an older snapshot
 * hands out a slice the ledger holds, is refused, and is raised to that mark. Either way the
 * gaps below the mark that no row holds become its holes: the draws given back (their requests
 * unanswered) and the slices handed out and never written are the payer's to draw again, so a
 * lost counter never costs the payer part of what it paid. A gap that is a draw still being
 * written is refused by the ledger like any overlap.
 * So that the first requests of a new credit never race a rebuild, its counter is opened at
 * zero when the credit is first recorded. Without a ledger the counter is the only record.
 */
import type { Redis } from 'ioredis';
import { runScriptGrouped } from '../meter-batch.js';
import { counterUsed, giveBack, METER_SCRIPT, meterKeys, overlapOf, raiseCounter, seedCounter, takeBackInDoubt } from '../meter-slices.js';
import { giveBackRuns, takeBackBlock, type AheadCounter } from '../meter-pool.js';
import type { CreditLedger } from './ledger.js';

/** A counter idle this long leaves Redis and is rebuilt from the ledger on its next use. */
const IDLE_SECONDS = 7 * 86_400;
/** Without a ledger the counter is all there is: kept far longer than any JWT. */
const UNBACKED_SECONDS = 400 * 86_400;

export function prepaidCounterKey(keyPrefix: string, policy: string): string {
  return `${keyPrefix}x402:prepaid:${policy}`;
}

export interface Draw { requestId: string; gateway: string }

export type DrawResult =
  /** `requestId`: the ledger row's, when it is one recorded ahead (../meter-pool.ts) rather than the caller's */
  | { ok: true; chunk: bigint; used: bigint; credit: bigint; remaining: bigint; requestId?: string }
  | { ok: false; reason: string; usedUp: boolean };

export async function drawCredit(
  redis: Redis, keyPrefix: string, policy: string, credit: bigint, chunk: bigint, nowSeconds: number, ledger: CreditLedger | undefined, d: Draw,
): Promise<DrawResult> {
  const key = prepaidCounterKey(keyPrefix, policy);
  const expireAt = BigInt(nowSeconds + (ledger ? IDLE_SECONDS : UNBACKED_SECONDS));
  const run = (seed: string): Promise<[number, number, number, number, number]> =>
    runScriptGrouped(redis, METER_SCRIPT, meterKeys(key), [chunk.toString(), credit.toString(), expireAt.toString(), seed, '0']);
  const counter = ledger?.ahead && chunk > 0n ? creditCounter(redis, ledger, { key, policy, gateway: d.gateway, chunk, credit, expireAt }) : undefined;
  const ahead = counter && ledger?.ahead?.take(counter);
  if (ahead && 'requestId' in ahead) return { ok: true, chunk, used: ahead.used, credit, remaining: credit - ahead.used, requestId: ahead.requestId };
  const at = { redis, key, policy, chunk, expireAt };
  let r: Counted;
  try {
    r = await counted(run, ledger, at, d);
    // used up while this node holds rows recorded ahead for the credit: they go back, and the request is drawn once more
    if (r[0] === 0 && counter && (await ledger?.ahead?.releaseCounter(counter.id))) r = await counted(run, ledger, at, d);
  } finally {
    ahead?.waiting();
  }
  const used = BigInt(r[1]);
  if (r[0] !== 1) {
    return { ok: false, usedUp: true, reason: `the prepaid credit of ${credit} is used up (${used} used, this request costs ${chunk}); pay again for a new credit` };
  }
  return { ok: true, chunk, used, credit, remaining: credit - used };
}

type Counted = [number, number, number, number, number];

/** The script's count of one request, and with a ledger its row, the counter set right from the ledger as needed. */
async function counted(
  run: (seed: string) => Promise<Counted>, ledger: CreditLedger | undefined, at: { redis: Redis; key: string; policy: string; chunk: bigint; expireAt: bigint }, d: Draw,
): Promise<Counted> {
  const { redis, key, policy, chunk, expireAt } = at;
  let r = await run(ledger ? '' : '0');
  for (let tries = 0; ledger && r[0] !== 0; tries += 1) {
    if (tries === 6) throw new Error('the credit\'s counter kept falling behind the ledger while it was set right');
    if (r[0] === -1) {
      // lost: set from the ledger, with the gaps its rows leave as holes (draws given back before it was lost)
      const { mark, gaps } = await ledger.rebuild(policy);
      await seedCounter(redis, key, mark, expireAt, gaps);
      r = await run('');
      continue;
    }
    try {
      await ledger.recordUse({ requestId: d.requestId, policy, gateway: d.gateway, amount: chunk, sliceStart: BigInt(r[3]) });
      break;
    } catch (err) {
      if (!overlapOf(err)) {
        takeBackInDoubt(() => ledger.discardUse(d.requestId, err));
        throw err;
      }
      // the counter is behind the ledger (Redis restored from an older snapshot): raised to its mark, drawn again
      const { mark, gaps } = await ledger.rebuild(policy);
      await raiseCounter(redis, key, mark, gaps);
      r = await run('');
    }
  }
  return r;
}

/**
 * A credit's counter as rows recorded ahead count on it (../meter-pool.ts): a block of n draws is one meter
 * script of cost n × chunk under the credit lowered by `room`, and n reserved rows, each with its own
 * request id and slice. Unused rows are deleted (their numbers closed) and, all gone, their cost given
 * back as the one slice at the block's end they hold.
 */
function creditCounter(
  redis: Redis, ledger: CreditLedger, c: { key: string; policy: string; gateway: string; chunk: bigint; credit: bigint; expireAt: bigint },
): AheadCounter {
  const { chunk } = c;
  return {
    id: `${c.key}|${chunk}|${c.gateway}`, chunk, limit: c.credit,
    async count(n, room) {
      // '' seed: a counter to rebuild is left to the next request drawn by itself (-1, nothing counted)
      const r = await runScriptGrouped(redis, METER_SCRIPT, meterKeys(c.key), [(n * chunk).toString(), (c.credit - room).toString(), c.expireAt.toString(), '', '0']);
      if (r[0] === 1) return { start: BigInt(r[3]), accountStart: 0n, usedAfter: BigInt(r[1]), owedAfter: 0n };
      return r[0] === -1 ? undefined : { used: BigInt(r[1]), owed: 0n };
    },
    record: (ids, counted) => Promise.allSettled(ids.map((requestId, i) => ledger.recordUse({
      requestId, policy: c.policy, gateway: c.gateway, amount: chunk, sliceStart: counted.start + BigInt(i) * chunk, reserve: true,
    }))),
    async failed(ids, results) {
      // rows that may have been written are taken back; a counter behind the ledger is raised by the next request drawn
      // by itself. Else the counter is rebuilt from the ledger, the block's slices the payer's again (a row still in doubt
      // that commits later is refused by the ledger to whoever is handed its slice, and the counter raised)
      if (!takeBackBlock(ids, results, (id, cause) => ledger.discardUse(id, cause))) await redis.del(c.key);
    },
    async giveBack(ids, end) {
      const all = await giveBackRuns(ids, end, chunk, async (id) => (await ledger.unservedUse(id)) !== undefined, (sliceEnd, amount) => giveBack(redis, c.key, sliceEnd, amount));
      // a row not deleted stays a reservation (deleted by the settler at its bound, never drawn): the counter is rebuilt
      // from the ledger then, so that what was deleted is the payer's again at once
      if (!all) await redis.del(c.key);
    },
  };
}

/** A new credit's counter, at zero (only for a credit recorded just now: a lost counter is rebuilt, never reset). */
export async function openCounter(redis: Redis, keyPrefix: string, policy: string, nowSeconds: number): Promise<void> {
  await redis.set(prepaidCounterKey(keyPrefix, policy), '0', 'EXAT', nowSeconds + IDLE_SECONDS, 'NX');
}

/** What has been drawn from a credit: the counter, or the ledger when Redis has none. */
export async function creditUsed(redis: Redis, keyPrefix: string, policy: string, ledger: CreditLedger | undefined): Promise<bigint> {
  const used = await counterUsed(redis, prepaidCounterKey(keyPrefix, policy));
  if (used !== undefined) return used;
  return ledger ? ledger.used(policy) : 0n;
}
