/**
 * Pay-as-you-go metering. Each request's chunk is counted against the policy's period in
 * Redis, shared by every API node, in one atomic script: nodes racing on one policy can
 * never together pass the cap.
 *
 * The period is the chain's: it starts at current_period_start and lasts
 * period_length_seconds. Once the clock has passed its end, the program starts the next
 * period at the first charge after it (currentPeriod): usage metered meanwhile waits in one
 * period, whatever the time, and what the chain charged (current_period_total) belongs to
 * the old one. Within a period, what is used is what was metered here, or, when more, what
 * the chain has charged with the usage of earlier periods not charged yet (charged late, it
 * lands in this period):
 *
 *   used = max(metered, chain's period is the current one ? current_period_total : 0 (+ carried over))
 *
 * What the service charges is metered usage, so the chain's total never runs ahead of
 * the counter on its account, and a stale read of the chain (the policy cache) can only
 * make the estimate higher, never lower. A chunk is admitted when chunk ≤ max_chunk_amount
 * and used + chunk ≤ max_amount_per_period. The counter is keyed by (policy, period
 * start) and expires at the period's end (plus an hour), so a new period starts from
 * zero with nothing to reset.
 *
 * With a usage ledger (Postgres, commands/settlement/usage-ledger.ts) every chunk admitted is
 * written there, with the slices it holds (meter-slices.ts), before the response leaves; a
 * counter Redis lost (a restart) is rebuilt from the ledger's high marks before anything is
 * admitted against it, and one that went back in time is caught by the ledger refusing its
 * overlapping slice. Amounts above 2^53 lose precision in Lua's numbers; requirements are
 * limited to safe integers.
 *
 * With a ledger, the same script also counts the chunk in the outstanding of the payer's
 * account, shared by every policy drawing on it (account-outstanding.ts), and refuses it
 * when that would pass what the account can fund: one account funding policies at several
 * gateways is never owed more than it holds. That count spans periods, so usage of a period
 * past, not charged yet, still counts after the rollover.
 */
import type { Redis } from 'ioredis';
import type { PayAsYouGoType } from '../../src/kernel/domain/policy-type.js';
import { accountOutstandingKey, accountPositionKey, REBUILD_SECONDS } from './account-outstanding.js';
import { runScriptGrouped } from './meter-batch.js';
import { counterUsed, giveBack, METER_SCRIPT, meterKeys, overlapOf, raiseCounter, takeBackInDoubt } from './meter-slices.js';
import { giveBackRuns, takeBackBlock, type AheadCounter, type MeterAhead } from './meter-pool.js';

/**
 * Usage is refused this close to the policy's expiry: the settler charges a policy's usage
 * before it expires (plan.ts, chargeDue), and a chunk admitted later could not be charged in
 * time (the program refuses execute_payment once expiry_date has passed).
 */
export const EXPIRY_MARGIN_SECONDS = 120;

export interface Period { start: bigint; end: bigint; settled: bigint }

/**
 * The period usage metered now is charged in, and what the chain has charged in it. While the
 * chain's period runs, that period. Once it has ended, the program starts the next one at the
 * first charge after (current_period_start = that charge's time), not on a grid: until then,
 * usage waits in one period labelled by the old one's end (`start`), which the next charge
 * opens, ending a period after that charge at the earliest (`end`: a period from now).
 */
export function currentPeriod(t: PayAsYouGoType, nowSeconds: number): Period {
  return periodOf(termsOf(t), nowSeconds);
}

/** A pay-as-you-go policy's numbers, parsed once per decoded account (the policy cache keeps one object while it holds the read). */
interface Terms { expiry: bigint; maxChunk: bigint; cap: bigint; length: bigint; start: bigint; total: bigint }
const parsedTerms = new WeakMap<PayAsYouGoType, Terms>();

function termsOf(t: PayAsYouGoType): Terms {
  let terms = parsedTerms.get(t);
  if (terms === undefined) {
    terms = {
      expiry: t.expiry_date === null ? 0n : BigInt(t.expiry_date), maxChunk: BigInt(t.max_chunk_amount), cap: BigInt(t.max_amount_per_period),
      length: BigInt(t.period_length_seconds), start: BigInt(t.current_period_start), total: BigInt(t.current_period_total),
    };
    parsedTerms.set(t, terms);
  }
  return terms;
}

function periodOf(t: Terms, nowSeconds: number): Period {
  const now = BigInt(nowSeconds);
  if (t.length <= 0n || now < t.start + t.length) return { start: t.start, end: t.start + t.length, settled: t.total };
  return { start: t.start + t.length, end: now + t.length, settled: 0n };
}

/** Where admitted chunks are kept durably (commands/settlement/usage-ledger.ts). */
export interface UsageLedger {
  /**
   * writes the chunk of one request once admitted, with the slices it holds, as a reservation:
   * not charged until served(), dropped if neither served() nor unserved() comes within the
   * ledger's bound. Fails with an exclusion violation (meter-slices.ts) when a slice overlaps one
   * the ledger holds: the counter that handed it out is behind the ledger.
   */
  record(u: {
    requestId: string; policy: string; gateway: string; userPayment: string; chunk: bigint; periodStart: bigint;
    periodSliceStart?: bigint; accountSliceStart?: bigint;
    /** what the account's outstanding may reach with this chunk, as the meter checked it: the ledger refuses the row past it */
    accountLimit?: bigint;
    /** recorded ahead of its request (meter-pool.ts): held out of the served marks until served */
    ahead?: boolean;
  }): Promise<void>;
  /**
   * takes back a chunk recorded and then not admitted; `cause`: the error of its write, when the write
   * may still have committed (its statement in doubt is waited for first)
   */
  discard(requestId: string, cause?: unknown): Promise<void>;
  /**
   * the request was served: its chunk is charged (unless its reservation had been dropped already,
   * past its bound); resolves once that is durable
   */
  served(requestId: string): Promise<void>;
  /** makes every served() so far durable now (an API node stopping, its requests answered) */
  flush(): Promise<void>;
  /** the request ended unanswered: its reservation is dropped, and returned so its counts are taken back */
  unserved(requestId: string): Promise<UsageRow | undefined>;
  /**
   * the period counter's high mark: the end of the highest slice held in the period (at least
   * every chunk admitted in it), or, when more, what the chain charged in it (`settled`) with
   * the usage of earlier periods not charged yet (the program counts it in the period of its charge)
   */
  metered(policy: string, periodStart: bigint, settled: bigint): Promise<bigint>;
  /** the account's usage not charged yet, every policy's (its outstanding), and its position's high mark */
  outstanding(userPayment: string): Promise<{ owed: bigint; position: bigint }>;
  /** rows recorded ahead for busy counters (meter-pool.ts), when this ledger keeps them */
  readonly ahead?: MeterAhead;
}

/** A ledger row as the counts hold it; `periodSliceEnd`: the end of the period slice it held (null: recorded before slices were kept). */
export interface UsageRow { policy: string; periodStart: bigint; userPayment: string | null; chunk: bigint; periodSliceEnd: bigint | null }

/** `userPayment`: the payer's account the policy draws on (the policy's user_payment) */
export interface MeterLedger { ledger: UsageLedger; requestId: string; gateway: string; userPayment: string }

/**
 * What the payer's token account can still fund (payability.ts): a chunk is admitted only
 * while the period's usage not charged yet (what is used beyond the chain's period total),
 * and, with a ledger, the account's usage not charged yet across all its policies
 * (account-outstanding.ts), this chunk included, fit in it; `refuse` says why not.
 * `exposure`: the most the merchant lets the account use beyond what is charged on chain
 * (the requirement's maxUnsettledAmount); with a ledger, the outstanding never passes it.
 */
export interface MeterFunds { amount: bigint; refuse: (chunk: bigint, unsettled: bigint) => string; exposure?: bigint }

/** The Redis key of one policy's period counter. */
export function usageCounterKey(keyPrefix: string, policy: string, periodStart: bigint | string): string {
  return `${keyPrefix}x402:usage:${policy}:${periodStart}`;
}

export type MeterResult =
  /** `requestId`: the ledger row's, when it is one recorded ahead (meter-pool.ts) rather than the caller's */
  | { ok: true; chunk: bigint; periodTotal: bigint; periodLimit: bigint; periodEnd: bigint; requestId?: string }
  | { ok: false; reason: string };

export async function meterRequest(
  redis: Redis, keyPrefix: string, policy: string, t: PayAsYouGoType, chunk: bigint, nowSeconds: number, l?: MeterLedger, funds?: MeterFunds,
): Promise<MeterResult> {
  const terms = termsOf(t);
  if (terms.expiry > 0n && terms.expiry <= BigInt(nowSeconds + EXPIRY_MARGIN_SECONDS)) {
    return { ok: false, reason: `the pay-as-you-go policy expires at ${t.expiry_date}: usage within ${EXPIRY_MARGIN_SECONDS} s of its expiry could not be charged before it` };
  }
  if (chunk < 0n) return { ok: false, reason: `a request cannot cost a negative amount (${chunk})` };
  const maxChunk = terms.maxChunk;
  if (chunk > maxChunk) return { ok: false, reason: `this request costs ${chunk}, above the policy's max_chunk_amount ${maxChunk}` };
  const cap = terms.cap;
  const p = periodOf(terms, nowSeconds);
  const room = cap - p.settled;
  const exhausted = (used: bigint): MeterResult => ({
    ok: false, reason: `the period's cap of ${cap} is reached (${used} used, this request costs ${chunk}); the next period starts at ${p.end}`,
  });
  if (room < chunk) return exhausted(p.settled);
  const key = usageCounterKey(keyPrefix, policy, p.start);
  if (chunk === 0n) {
    // a free request: nothing to count or bill. A ledger row of 0 could never be charged (the
    // program refuses execute_payment(0) as InvalidAmount): it stayed unsettled for ever and
    // kept the settler reading the policy from the chain every round.
    const counted = (await counterUsed(redis, key)) ?? 0n;
    return { ok: true, chunk, periodTotal: counted > p.settled ? counted : p.settled, periodLimit: cap, periodEnd: p.end };
  }
  // the same atomic check, against the lesser of the cap and what the payer's account can still fund
  const fundable = funds ? p.settled + funds.amount : cap;
  const limit = fundable < cap ? fundable : cap;
  // with a ledger (which the settler charges, and releases the outstanding of), the account's outstanding too
  const accountLimit = funds?.exposure !== undefined && funds.exposure < funds.amount ? funds.exposure : funds?.amount ?? 0n;
  const account = l && funds ? { owed: accountOutstandingKey(keyPrefix, l.userPayment), position: accountPositionKey(keyPrefix, l.userPayment), limit: accountLimit } : undefined;
  const aheadCounter = l?.ledger.ahead && account ? paygCounter(redis, { ...l, policy, chunk, periodStart: p.start, key, account }, {
    limit, accountLimit, expireAt: (p.end + 3600n).toString(), floor: p.settled.toString(), exposure: funds?.exposure?.toString() ?? '',
  }) : undefined;
  const ahead = aheadCounter && l?.ledger.ahead?.take(aheadCounter);
  if (ahead && 'requestId' in ahead) return { ok: true, chunk, periodTotal: ahead.used, periodLimit: cap, periodEnd: p.end, requestId: ahead.requestId };
  const run = (seeds: Seeds): Promise<Counted> =>
    runScriptGrouped(redis, METER_SCRIPT, meterKeys(key, account), [
      chunk.toString(), limit.toString(), (p.end + 3600n).toString(), seeds.counter, p.settled.toString(),
      accountLimit.toString(), seeds.owed, seeds.position, REBUILD_SECONDS,
    ]);
  let r: Counted;
  try {
    r = await admit(run, l && { ...l, policy, periodStart: p.start, settled: p.settled, chunk, redis, key, account });
    // refused while this node holds rows recorded ahead for the counter: they go back, and the request is counted once more
    if ((r[0] === 0 || r[0] === 2) && aheadCounter && (await l?.ledger.ahead?.releaseCounter(aheadCounter.id))) {
      r = await admit(run, l && { ...l, policy, periodStart: p.start, settled: p.settled, chunk, redis, key, account });
    }
  } finally {
    ahead?.waiting();
  }
  const used = BigInt(r[1]);
  if (r[0] !== 1) {
    const owed = BigInt(r[2]);
    if (r[0] === 2 && funds?.exposure !== undefined && owed + chunk > funds.exposure) return { ok: false, reason: unsettledTooMuch(funds.exposure, owed, chunk) };
    if (r[0] === 2 && funds) return { ok: false, reason: funds.refuse(chunk, owed) };
    if (funds && used + chunk <= cap) return { ok: false, reason: funds.refuse(chunk, used > p.settled ? used - p.settled : 0n) };
    return exhausted(used);
  }
  return { ok: true, chunk, periodTotal: used, periodLimit: cap, periodEnd: p.end };
}

type Counted = [number, number, number, number, number];
interface Seeds { counter: string; owed: string; position: string }
interface Recording extends MeterLedger {
  policy: string; periodStart: bigint; settled: bigint; chunk: bigint; redis: Redis; key: string; account: { owed: string; position: string; limit: bigint } | undefined;
}

/**
 * A policy's period counter as rows recorded ahead count on it (meter-pool.ts): a block of n chunks is one
 * meter script of cost n × chunk under the request's limits lowered by `room`, and n ledger rows, each with
 * its own request id and slices. Unused rows are deleted (their numbers closed) and, all gone, their chunks
 * given back as the one slice at the block's end they hold.
 */
function paygCounter(
  redis: Redis, l: MeterLedger & { policy: string; chunk: bigint; periodStart: bigint; key: string; account: { owed: string; position: string } },
  a: { limit: bigint; accountLimit: bigint; expireAt: string; floor: string; exposure: string },
): AheadCounter {
  const { ledger, chunk } = l;
  return {
    // one requirement's exposure: a block counted under another's is never taken under this one
    id: `${l.key}|${chunk}|${l.userPayment}|${l.gateway}|${a.exposure}`, chunk, limit: a.limit, accountLimit: a.accountLimit,
    async count(n, room) {
      // '' seeds: a counter to rebuild is left to the next request metered by itself (-1, nothing counted)
      const r = await runScriptGrouped(redis, METER_SCRIPT, meterKeys(l.key, l.account), [
        (n * chunk).toString(), (a.limit - room).toString(), a.expireAt, '', a.floor, (a.accountLimit - room).toString(), '', '', REBUILD_SECONDS,
      ]);
      if (r[0] === 1) return { start: BigInt(r[3]), accountStart: BigInt(r[4]), usedAfter: BigInt(r[1]), owedAfter: BigInt(r[2]) };
      return r[0] === -1 ? undefined : { used: BigInt(r[1]), owed: BigInt(r[2]) };
    },
    record: (ids, c) => Promise.allSettled(ids.map((requestId, i) => ledger.record({
      requestId, policy: l.policy, gateway: l.gateway, userPayment: l.userPayment, chunk, periodStart: l.periodStart,
      periodSliceStart: c.start + BigInt(i) * chunk, accountSliceStart: c.accountStart + BigInt(i) * chunk, accountLimit: a.accountLimit, ahead: true,
    }))),
    async failed(ids, results, end) {
      // as a request's row refused (admit): the account's counts rebuilt from the ledger, rows that may be written taken
      // back; a count behind the ledger is raised by the next request metered by itself, which meets the same overlap.
      // Else the block's chunks go back to the period (a row still in doubt that commits later is refused by the ledger
      // to whoever is handed its slice again, and the counter raised: room lost, never passed)
      await redis.del(l.account.owed, l.account.position).catch(() => undefined);
      if (!takeBackBlock(ids, results, (id, cause) => ledger.discard(id, cause))) await giveBack(redis, l.key, end, BigInt(ids.length) * chunk);
    },
    // a row not deleted stays a reservation (dropped at its bound, never charged) and its chunk counted
    giveBack: (ids, end) => giveBackRuns(ids, end, chunk, async (id) => (await ledger.unserved(id)) !== undefined,
      (sliceEnd, amount) => giveBack(redis, l.key, sliceEnd, amount, l.account.owed)).then(() => undefined),
  };
}

/** The 402 reason of a chunk that would take the payer's usage not charged yet past what the merchant accepts. */
export function unsettledTooMuch(exposure: bigint, owed: bigint, chunk: bigint): string {
  return `${owed} is used and not charged on chain yet; this request costs ${chunk} and the requirement's maxUnsettledAmount is ${exposure}: retry once the pending usage is charged`;
}

/**
 * Counts the chunk (the script) and, with a ledger, records it with its slices. A count Redis
 * lost is rebuilt from the ledger's high marks; a slice the ledger already holds (a counter
 * behind the ledger) raises the counter to the ledger's mark and the chunk is counted again.
 */
async function admit(run: (s: Seeds) => Promise<Counted>, l: Recording | undefined): Promise<Counted> {
  const seeds: Seeds = { counter: l ? '' : '0', owed: '', position: '' };
  for (let tries = 0; tries < 6; tries += 1) {
    const r = await run(seeds);
    if (r[0] === -1 && l) {
      const [counter, acc] = await Promise.all([
        r[1] === 1 ? l.ledger.metered(l.policy, l.periodStart, l.settled).then(String) : Promise.resolve(seeds.counter),
        r[2] === 1 ? l.ledger.outstanding(l.userPayment) : Promise.resolve(undefined),
      ]);
      Object.assign(seeds, { counter }, acc ? { owed: acc.owed.toString(), position: acc.position.toString() } : {});
      continue;
    }
    if (r[0] !== 1 || !l) return r;
    try {
      await l.ledger.record({
        requestId: l.requestId, policy: l.policy, gateway: l.gateway, userPayment: l.userPayment, chunk: l.chunk, periodStart: l.periodStart,
        periodSliceStart: BigInt(r[3]), ...(l.account ? { accountSliceStart: BigInt(r[4]), accountLimit: l.account.limit } : {}),
      });
      return r;
    } catch (err) {
      // not recorded, so not admitted. The account's counts are rebuilt from the ledger: taking the chunk
      // back from its outstanding while its position keeps the slice would let the account owe that much
      // more (a slice is handed out once, never twice: meter-slices.ts)
      if (l.account) await l.redis.del(l.account.owed, l.account.position).catch(() => undefined);
      const behind = overlapOf(err);
      if (!behind) {
        takeBackInDoubt(() => l.ledger.discard(l.requestId, err));
        throw err;
      }
      // a count behind the ledger: the period's raised to the ledger's mark, the account's rebuilt (above)
      if (behind === 'period') await raiseCounter(l.redis, l.key, await l.ledger.metered(l.policy, l.periodStart, l.settled));
      Object.assign(seeds, { counter: '', owed: '', position: '' });
    }
  }
  throw new Error('the usage counters kept falling behind the ledger while they were set right');
}

