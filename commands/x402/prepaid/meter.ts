/**
 * Drawing requests from a prepaid credit. The credit's use is counted in Redis, shared by
 * every API node, with the pay-as-you-go script (metering.ts): one atomic check-and-add,
 * so nodes racing on one credit can never together draw more than it holds.
 *
 * With a ledger (Postgres, ledger.ts) each request's cost is written there first and taken
 * back when refused; a counter Redis lost (a restart, or the idle expiry below) is rebuilt
 * from the ledger before anything is admitted against it. A rebuild can count a request
 * racing with it twice, never zero times: the payer may lose a request's worth, the
 * merchant never serves one unpaid. So that the first requests of a new credit never
 * race a rebuild, its counter is opened at zero when the credit is first recorded.
 * Without a ledger the counter is the only record.
 */
import type { Redis } from 'ioredis';
import { runScript } from '../../../infra/redis/scripts.js';
import { METER_SCRIPT } from '../metering.js';
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
  | { ok: true; chunk: bigint; used: bigint; credit: bigint; remaining: bigint }
  | { ok: false; reason: string };

export async function drawCredit(
  redis: Redis, keyPrefix: string, policy: string, credit: bigint, chunk: bigint, nowSeconds: number, ledger: CreditLedger | undefined, d: Draw,
): Promise<DrawResult> {
  const key = prepaidCounterKey(keyPrefix, policy);
  const expireAt = BigInt(nowSeconds + (ledger ? IDLE_SECONDS : UNBACKED_SECONDS));
  const run = (seed: string): Promise<[number, number, number]> =>
    runScript(redis, METER_SCRIPT, [key], [chunk.toString(), credit.toString(), expireAt.toString(), seed, '0']);
  if (ledger) await ledger.recordUse({ requestId: d.requestId, policy, gateway: d.gateway, amount: chunk });
  let r: [number, number, number];
  try {
    r = await run(ledger ? '' : '0');
    if (r[0] === -1 && ledger) r = await run((await ledger.used(policy, d.requestId)).toString());
  } catch (err) {
    if (ledger) await ledger.discardUse(d.requestId).catch(() => undefined);
    throw err;
  }
  const used = BigInt(r[1]);
  if (r[0] !== 1) {
    if (ledger) await ledger.discardUse(d.requestId);
    return { ok: false, reason: `the prepaid credit of ${credit} is used up (${used} used, this request costs ${chunk}); pay again for a new credit` };
  }
  return { ok: true, chunk, used, credit, remaining: credit - used };
}

/** A new credit's counter, at zero (only for a credit recorded just now: a lost counter is rebuilt, never reset). */
export async function openCounter(redis: Redis, keyPrefix: string, policy: string, nowSeconds: number): Promise<void> {
  await redis.set(prepaidCounterKey(keyPrefix, policy), '0', 'EXAT', nowSeconds + IDLE_SECONDS, 'NX');
}

/** What has been drawn from a credit: the counter, or the ledger when Redis has none. */
export async function creditUsed(redis: Redis, keyPrefix: string, policy: string, ledger: CreditLedger | undefined): Promise<bigint> {
  const v = await redis.get(prepaidCounterKey(keyPrefix, policy));
  if (v !== null) return BigInt(v);
  return ledger ? ledger.used(policy, '') : 0n;
}
