/**
 * One settlement per x402://upto authorization, across nodes: a Redis marker per policy,
 * taken (SET NX) before the merchant's execute_payment is sent. It holds the transaction's
 * signature, blockhash and the policy's payment_count when it was taken, so that a
 * settlement whose answer was lost (a confirmation that timed out, a process that died)
 * is resolved from the chain by the next request, never held blindly:
 *   - the transaction landed → the marker is done: the same transaction gets the stored
 *     result, another one is refused (settled already);
 *   - it can never land (its blockhash expired, no status with the history searched, the
 *     policy's payment_count unchanged), or it failed → the marker is cleared, and this
 *     request may settle;
 *   - still in doubt → the same bytes are sent again, or another transaction waits (503).
 * A settlement nobody asks about again (the merchant gave up after its 503) is resolved the
 * same way by the settler (resolveUptoInDoubt): every marker taken is listed, by when, in
 * one sorted set until it is done or cleared, so no landed settlement stays "sending" and
 * none expires unrecorded with its marker.
 */
import bs58 from 'bs58';
import { VersionedTransaction } from '@solana/web3.js';
import type { Redis } from 'ioredis';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { resolveInDoubt, type SenderIo } from '../../infra/solana/sender.js';
import { AppError } from '../../src/kernel/http/errors.js';

export interface UptoMarker {
  /** absent in a marker written before markers were resolved: held as done */
  state?: 'sending' | 'done';
  amount: string;
  transaction: string;
  blockhash?: string;
  paymentCount?: number;
}

export interface MarkerDeps { redis: Redis; redisPrefix: string; io: SenderIo; programId: string }

/** A settled marker outlives its settlement by days (the reconciliation reads it); one in flight only while it may matter. */
const DONE_TTL_SECONDS = 7 * 86_400;
const SENDING_TTL_SECONDS = 3600;
/** How long a request waits before asking again about a transaction still in doubt. */
const RETRY_AFTER_SECONDS = 5;

const COMPARE_AND_DELETE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

const markerKey = (prefix: string, policy: string): string => `${prefix}x402:upto:${policy}`;
/** The policies whose marker was taken and may still be sending, scored by when (ms). */
const sendingKey = (prefix: string): string => `${prefix}x402:upto-sending`;

export type Claim =
  | { kind: 'won' }
  /** the same bytes are in flight and may still land: send them again */
  | { kind: 'resend' }
  | { kind: 'settled'; marker: UptoMarker }
  | { kind: 'in_doubt'; reason: string };

/** The signature and blockhash of a serialized transaction (checked to deserialize before). */
export function signedFacts(serialized: string): { signature: string; blockhash: string } {
  const tx = VersionedTransaction.deserialize(Buffer.from(serialized, 'base64'));
  return { signature: bs58.encode(tx.signatures[0] ?? new Uint8Array(64)), blockhash: tx.message.recentBlockhash };
}

/** Takes the policy's marker for `mine`, or says why not after resolving the one held. */
export async function claimMarker(deps: MarkerDeps, policy: string, mine: UptoMarker): Promise<Claim> {
  const key = markerKey(deps.redisPrefix, policy);
  for (let round = 0; round < 3; round += 1) {
    // listed before it is taken: a marker is never sending unlisted (a listing whose marker another holds, or none, is dropped by the resolver)
    await deps.redis.zadd(sendingKey(deps.redisPrefix), 'NX', Date.now(), policy);
    if (await deps.redis.set(key, JSON.stringify(mine), 'EX', SENDING_TTL_SECONDS, 'NX') === 'OK') return { kind: 'won' };
    const raw = await deps.redis.get(key);
    if (raw === null) continue;
    const held = JSON.parse(raw) as UptoMarker;
    const fate = await resolveMarker(deps, policy, held, raw);
    if (fate === 'settled') return { kind: 'settled', marker: { ...held, state: 'done' } };
    if (fate === 'cleared') continue;
    if (fate === 'can_land' && held.transaction === mine.transaction) return { kind: 'resend' };
    return { kind: 'in_doubt', reason: `the settlement ${held.transaction} of this authorization may still land` };
  }
  return { kind: 'in_doubt', reason: 'the authorization\'s marker changed while it was resolved' };
}

/**
 * The policy's settlement by the transaction `signature`, when it was made: its marker done, or
 * still sending and landed (marked done now). Undefined for no marker, another transaction's, or
 * one the chain does not show landed (the request goes on as a settlement: resent, or waiting).
 */
export async function settledBy(deps: MarkerDeps, policy: string, signature: string): Promise<UptoMarker | undefined> {
  const raw = await deps.redis.get(markerKey(deps.redisPrefix, policy));
  if (raw === null) return undefined;
  const held = JSON.parse(raw) as UptoMarker;
  if (held.transaction !== signature) return undefined;
  return await resolveMarker(deps, policy, held, raw) === 'settled' ? { ...held, state: 'done' } : undefined;
}

/** Whether the policy has a settlement marker at all (sending or done); false once Redis lost it or it expired. */
export async function markerHeld(deps: MarkerDeps, policy: string): Promise<boolean> {
  return (await deps.redis.exists(markerKey(deps.redisPrefix, policy))) === 1;
}

/** What the chain says of the held marker's transaction; a settled one is marked done, a dead one cleared. */
async function resolveMarker(deps: MarkerDeps, policy: string, held: UptoMarker, raw: string): Promise<'settled' | 'cleared' | 'can_land' | 'in_doubt'> {
  const key = markerKey(deps.redisPrefix, policy);
  if (held.state !== 'sending') {
    await unlist(deps, policy);
    return 'settled';
  }
  const v = await resolveInDoubt(deps.io, { signature: held.transaction, blockhash: held.blockhash ?? null }, async () => {
    const read = await readProgramAccount(deps.io.rpc, policy, 'PaymentPolicy', { programId: deps.programId, commitment: deps.io.commitment }).catch(() => undefined);
    if (read === undefined) return undefined;
    return read.kind !== 'found' || Number(read.data['payment_count'] ?? 0) === held.paymentCount;
  });
  if (v.kind === 'landed' || v.kind === 'moved') {
    await markDone(deps, policy, held);
    return 'settled';
  }
  if (v.kind === 'failed' || v.kind === 'cannot_land') {
    await deps.redis.eval(COMPARE_AND_DELETE, 1, key, raw);
    await unlist(deps, policy);
    return 'cleared';
  }
  return v.kind === 'can_land' ? 'can_land' : 'in_doubt';
}

export async function markDone(deps: MarkerDeps, policy: string, m: UptoMarker): Promise<void> {
  await deps.redis.set(markerKey(deps.redisPrefix, policy), JSON.stringify({ ...m, state: 'done' } satisfies UptoMarker), 'EX', DONE_TTL_SECONDS);
  await unlist(deps, policy);
}

/** Frees the marker this request took, when its transaction was refused (it landed nothing). */
export async function releaseMarker(deps: MarkerDeps, policy: string, mine: UptoMarker): Promise<void> {
  await deps.redis.eval(COMPARE_AND_DELETE, 1, markerKey(deps.redisPrefix, policy), JSON.stringify(mine));
  await unlist(deps, policy);
}

/** Off the list of markers sending (a failure here only leaves the resolver one more marker to read). */
async function unlist(deps: MarkerDeps, policy: string): Promise<void> {
  await deps.redis.zrem(sendingKey(deps.redisPrefix), policy).catch(() => undefined);
}

export interface UptoResolution { read: number; settled: number; cleared: number; inDoubt: number }

/**
 * The settler's pass over upto settlements left sending for `olderThanMs` or more (past their
 * request's confirmation wait: its answer was lost and nobody asked again): each resolved from the chain as the
 * next request would resolve it (landed: done; can never land: cleared), at most `max` a pass.
 */
export async function resolveUptoInDoubt(deps: MarkerDeps, nowMs: number, opts: { olderThanMs?: number; max?: number } = {}): Promise<UptoResolution> {
  const listed = await deps.redis.zrangebyscore(sendingKey(deps.redisPrefix), '-inf', nowMs - (opts.olderThanMs ?? 30_000), 'LIMIT', 0, opts.max ?? 50);
  const out: UptoResolution = { read: listed.length, settled: 0, cleared: 0, inDoubt: 0 };
  for (const policy of listed) {
    const raw = await deps.redis.get(markerKey(deps.redisPrefix, policy));
    if (raw === null) {
      await unlist(deps, policy);
      continue;
    }
    const fate = await resolveMarker(deps, policy, JSON.parse(raw) as UptoMarker, raw);
    if (fate === 'settled') out.settled += 1;
    else if (fate === 'cleared') out.cleared += 1;
    else out.inDoubt += 1;
  }
  return out;
}

/** A 503 that says when to ask again: the transaction of an earlier settlement may still land. */
export const stillInDoubt = (reason: string): AppError =>
  new AppError('upstream_unavailable', `${reason}; send the settlement again in ${RETRY_AFTER_SECONDS} s`, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
