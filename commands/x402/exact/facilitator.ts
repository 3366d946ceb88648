/**
 * x402 `exact` on Solana with this service as the facilitator (the sponsor that signs as
 * `feePayer`), as specs/schemes/exact/scheme_exact_svm.md defines it.
 *
 * The MUST checks, the co-signing, the send and the confirmation are @x402/svm's own
 * ExactSvmScheme (static layout: compute limit, compute price under the cap, one
 * TransferChecked of the exact amount of `asset` to the ATA of `payTo` under its token
 * program, only Memo or Lighthouse after it, `extra.memo` matched, the payer's signature,
 * the fee payer not the transfer's authority, a simulation), run on the service's keys and
 * chain (svm-signer.ts). What the package lacks is added here:
 * - fee payer isolation over every instruction's accounts (spec 2.1.1; the package's static
 *   path checks only the transfer's authority): its own assertFeePayerIsolated, before it;
 * - settlement once across nodes: a Redis lease (../idempotency.ts) orders concurrent
 *   copies, and the Postgres ledger (settlements.ts) keeps the signature recorded before the
 *   send and the answer after it, so a duplicate gets the stored answer and nothing is sent
 *   twice; the package's in-memory caches are per process. The stored answer is the answer
 *   to the requirement and gateway it was settled for only (the row's network, payTo, asset,
 *   amount and gateway): asked for other terms or by another gateway, it is
 *   `duplicate_settlement`;
 * - a signature in doubt (sent, the answer lost, or not confirmed in time) is not
 *   released while it can land: the next settle re-confirms the recorded signature (the
 *   package's pending path; the same bytes sent again while the chain has no status and the
 *   blockhash is valid) and answers `settlement_pending` until the chain says landed or
 *   failed, or proves it never can: its blockhash expired (read first) and no status even
 *   in the history. Then the payment failed (`invalid_exact_svm_transaction_expired`,
 *   terminal, nothing was taken): the payer signs a new one;
 * - one payment per source token account sent at a time, across nodes (source-lease.ts): each
 *   passes simulation alone, and the fee payer would pay for every one its balance cannot;
 * - a signature the package could not record as pending (it then answers a terminal failure)
 *   stays in doubt unless the chain says it failed: it can still land;
 * - replay refusal: /verify refuses a transaction already settled or in flight;
 * - the compute price and compute unit caps as settings;
 * - the payment as the service's event `x402.payment.settled` (settled-event.ts).
 */
import type { Redis } from 'ioredis';
import { getCompiledTransactionMessageDecoder } from '@solana/kit';
import type { PendingSettlementStore } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, SupportedKind, VerifyResponse } from '@x402/core/types';
import {
  assertFeePayerIsolated, decodeTransactionFromPayload, getTokenPayerFromTransaction, MEMO_PROGRAM_ADDRESS, SOLANA_DEVNET_CAIP2, SOLANA_MAINNET_CAIP2,
  SOLANA_TESTNET_CAIP2, transactionMessageHash,
} from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/facilitator';
import type { FacilitatorSvmSigner } from '@x402/svm';
import type { Db } from '../../../infra/postgres/database.js';
import type { RpcClient } from '../../../infra/solana/rpc-client.js';
import type { Commitment } from '../../../infra/solana/chain-reader.js';
import type { Clock } from '../../../src/kernel/domain/clock.js';
import type { RoomEmitter } from '../../scheduler/lifecycle-events.js';
import { createIdempotency, type SettledResult } from '../idempotency.js';
import { ensureFeePayer, loadFeePayers } from './fee-payers.js';
import { recordSettled } from './settled-event.js';
import {
  claimServed, claimSettlement, markFailedOnChain, otherTerms, pendingStore, readSettlement, releaseUnsent, sentRecorder, type SettledTerms, type SettlementFacts,
} from './settlements.js';
import { knownFailed, neverLands, resendWhileItCanLand, type Decoded } from './in-doubt.js';
import { createSourceLeases, sourceAccountOf } from './source-lease.js';
import { createServiceSvmSigner } from './svm-signer.js';

/** The wire's reasons (the package's own strings where it has one). */
export const REASONS = {
  networkMismatch: 'invalid_exact_svm_network_mismatch',
  undecodable: 'invalid_exact_svm_payload_transaction_could_not_be_decoded',
  notIsolated: 'invalid_exact_svm_fee_payer_not_isolated',
  duplicate: 'duplicate_settlement',
  pending: 'settlement_pending',
  failed: 'invalid_exact_svm_transaction_failed',
  expired: 'invalid_exact_svm_transaction_expired',
  sourceBusy: 'invalid_exact_svm_source_account_busy',
} as const;

/** How long a blockhash lets a transaction land at most (150 slots, at the slowest slots seen), counted past the confirmation timeout. */
const BLOCKHASH_LIFE_MS = 90_000;
/** How long a payment waits for another one from its source account to be settled (within the message's own lease). */
const SOURCE_WAIT_MS = 10_000;

export interface ExactSettings {
  /** SetComputeUnitPrice above this is refused (the sponsor's fee exposure) */
  maxPriorityFeeMicroLamports: number;
  /** SetComputeUnitLimit above this is refused */
  maxComputeUnits: number;
  confirmTimeoutMs: number;
  /** how long Redis keeps a settled answer for fast duplicates (Postgres keeps it for good) */
  idempotencyTtlSeconds: number;
  /** how long a node uses the fee payer keys it read before reading them again (a rotation elsewhere) */
  keyCacheMs: number;
}

export interface ExactFacilitatorDeps {
  db: Db;
  redis: Redis;
  keyPrefix: string;
  rpc: RpcClient;
  /** confirmation commitment of a settlement: confirmed at least */
  commitment: Commitment;
  /** the CAIP-2 network this service settles on */
  network: string;
  encryptionKey: Buffer | undefined;
  clock: Clock;
  settings: ExactSettings;
  /** Socket.IO rooms by trackingId (the payment's memo) */
  rooms?: RoomEmitter;
  /** after a payment is recorded: the node invalidates cached merchant answers (revenue counts it) */
  recorded?: () => Promise<unknown>;
  /** @x402/svm's pending store: the ledger's (settlements.ts) unless a test wraps it to inject a fault */
  pendingStore?: PendingSettlementStore;
}

/** Who asked for the settlement: the gateway whose API key or JWT called, or the protected resource's. */
export interface ExactCaller { gateway: string }

export interface ExactFacilitator {
  /** the `exact` kind of /supported for `network` (extra.feePayer) and its signers; undefined for another network */
  supportedKind(network: string): Promise<{ kind: SupportedKind; signers: string[] } | undefined>;
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements, caller: ExactCaller): Promise<SettleResponse>;
  /**
   * claims the one request a settled payment buys on a route of this service: true once per
   * transaction, across nodes, and only when it was settled for the route's `terms` and gateway
   */
  serveOnce(transaction: string, terms: SettledTerms): Promise<boolean>;
}

/**
 * The networks exact is offered on: those @x402/svm's clients know (a client cannot build a
 * payment for another, such as the plain localnet's solana:localnet; the localnet answers
 * as devnet for exact, SOLANA_CLUSTER=devnet).
 */
export const EXACT_NETWORKS: readonly string[] = [SOLANA_MAINNET_CAIP2, SOLANA_DEVNET_CAIP2, SOLANA_TESTNET_CAIP2];

/** An answer not kept as the message's settled answer (the lease is freed; the ledger row says what may follow). */
class Unstored extends Error {
  constructor(readonly answer: SettleResponse) { super(answer.errorReason ?? 'not settled'); }
}

/**
 * ../idempotency.ts keeps the Tributary schemes' SettledResult; an exact answer rides in its
 * paymentResponse as base64 JSON (the PAYMENT-RESPONSE header's own encoding). Exact grants
 * no JWT: body.jwt stays empty.
 */
const toStored = (a: SettleResponse): SettledResult => ({
  paymentResponse: Buffer.from(JSON.stringify(a)).toString('base64'),
  body: { jwt: '', message: 'x402 exact payment settled' },
  ...(a.payer ? { payer: a.payer } : {}),
  transaction: a.transaction,
});
const fromStored = (s: SettledResult): SettleResponse => JSON.parse(Buffer.from(s.paymentResponse, 'base64').toString('utf8')) as SettleResponse;

/** The answer to a payment settled (or being settled) for other terms or another gateway: never its stored success. */
const settledElsewhere = (why: string, network: string): SettleResponse => ({
  success: false, errorReason: REASONS.duplicate, errorMessage: `this transaction was settled for another requirement: ${why}`, transaction: '', network: network as Network,
});

/** No payer rather than an empty one (the package answers "" when it has none). */
function withPayer<T extends { payer?: string }>(a: T): T {
  if (a.payer !== '') return a;
  const { payer: _none, ...rest } = a;
  return rest as T;
}

function memoOf(tx: Decoded): string | null {
  const m = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  for (const ix of m.instructions) {
    if (m.staticAccounts[ix.programAddressIndex] === MEMO_PROGRAM_ADDRESS && ix.data) return new TextDecoder().decode(Uint8Array.from(ix.data));
  }
  return null;
}

/** The checks the package does not make; undefined when they pass. */
async function preChecks(network: string, payload: PaymentPayload, r: PaymentRequirements): Promise<{ reason: string; message?: string; tx?: Decoded } | { tx: Decoded; reason?: undefined }> {
  if (!EXACT_NETWORKS.includes(network)) return { reason: REASONS.networkMismatch, message: `exact is offered on public Solana networks only; this service runs on ${network}` };
  if (r.network !== network || payload.accepted?.network !== r.network) return { reason: REASONS.networkMismatch, message: `this facilitator settles exact on ${network}` };
  let tx: Decoded;
  try {
    tx = decodeTransactionFromPayload(payload.payload as { transaction: string });
  } catch {
    return { reason: REASONS.undecodable };
  }
  const feePayer = r.extra?.['feePayer'];
  if (typeof feePayer === 'string') {
    try {
      await assertFeePayerIsolated(tx, feePayer);
    } catch (err) {
      return { reason: REASONS.notIsolated, message: (err as Error).message, tx };
    }
  }
  return { tx };
}

function factsOf(tx: Decoded, payload: PaymentPayload, r: PaymentRequirements, caller: ExactCaller): SettlementFacts {
  const memo = typeof r.extra?.['memo'] === 'string' ? r.extra['memo'] : memoOf(tx);
  return {
    messageHash: transactionMessageHash(tx), network: r.network, gateway: caller.gateway, feePayer: typeof r.extra?.['feePayer'] === 'string' ? r.extra['feePayer'] : '',
    payer: getTokenPayerFromTransaction(tx) ?? '', payTo: r.payTo, asset: r.asset, amount: r.amount, resource: payload.resource?.url ?? null, memo,
  };
}

type PackageScheme = { scheme: ExactSvmScheme; signer: FacilitatorSvmSigner; addresses: string[] };

/** The package's scheme on the fee payer keys read at most keyCacheMs ago (a rotation on another node shows then). */
function keyedScheme(deps: ExactFacilitatorDeps, store: ReturnType<typeof pendingStore>): () => Promise<PackageScheme> {
  const { db, settings } = deps;
  let cached: { at: number; scheme: Promise<PackageScheme> } | undefined;
  return () => {
    const now = deps.clock.now();
    if (cached && now - cached.at < settings.keyCacheMs) return cached.scheme;
    const scheme = (async () => {
      await ensureFeePayer(db, { network: deps.network, nowMs: now, encryptionKey: deps.encryptionKey });
      const keys = await loadFeePayers(db, deps.network, now, deps.encryptionKey);
      const signer = await createServiceSvmSigner(keys, {
        rpc: deps.rpc, commitment: deps.commitment, confirmTimeoutMs: settings.confirmTimeoutMs, recorder: sentRecorder(db),
      });
      return {
        scheme: new ExactSvmScheme(signer, undefined, {
          pendingSettlementStore: store, maxPriorityFeeMicroLamports: settings.maxPriorityFeeMicroLamports, maxComputeUnits: settings.maxComputeUnits,
        }),
        signer,
        addresses: keys.map((k) => k.address),
      };
    })();
    cached = { at: now, scheme };
    scheme.catch(() => { if (cached?.scheme === scheme) cached = undefined; });
    return scheme;
  };
}

export function createExactFacilitator(deps: ExactFacilitatorDeps): ExactFacilitator {
  const { db, settings } = deps;
  const idem = createIdempotency({
    redis: deps.redis, keyPrefix: `${deps.keyPrefix}exact:`, leaseMs: settings.confirmTimeoutMs + 15_000, ttlSeconds: settings.idempotencyTtlSeconds,
  });
  const schemeNow = keyedScheme(deps, deps.pendingStore ?? pendingStore(db));
  // held from before the send until the fate is known; a payment in doubt keeps it until then or its expiry (past any landing)
  const leases = createSourceLeases({
    redis: deps.redis, keyPrefix: deps.keyPrefix, leaseMs: settings.confirmTimeoutMs + BLOCKHASH_LIFE_MS, waitMs: Math.min(SOURCE_WAIT_MS, settings.confirmTimeoutMs),
  });
  const io = { rpc: deps.rpc, commitment: deps.commitment };

  /** The answer the package gave after a send; the transaction's fate is known unless the answer says or leaves it in doubt. */
  async function inDoubt(answer: SettleResponse): Promise<boolean> {
    if (answer.errorReason === REASONS.pending) return true;
    if (answer.transaction === '' || answer.errorReason !== REASONS.failed) return false;
    // the package answers failed when it could not record a signature still pending (settlement_pending in its message)
    return answer.errorMessage?.startsWith(REASONS.pending) === true || !(await knownFailed(io, answer.transaction));
  }

  async function settleOwned(payload: PaymentPayload, r: PaymentRequirements, tx: Decoded, f: SettlementFacts): Promise<SettledResult> {
    const row = await readSettlement(db, f.messageHash);
    // settled or sent for another requirement: neither its answer nor its confirmation is this one's
    const elsewhere = row && (row.state === 'settled' || (row.state === 'sending' && row.signature !== null)) ? otherTerms(row, f) : undefined;
    if (elsewhere) throw new Unstored(settledElsewhere(elsewhere, r.network));
    if (row?.state === 'settled' && row.answer) return toStored(row.answer);
    if (row?.state === 'failed' && row.signature !== null && row.answer) throw new Unstored(row.answer);
    const source = sourceAccountOf(tx);
    const free = async () => { if (source) await leases.release(source, f.messageHash); };
    // a recorded signature is re-confirmed by the package (its pending store), never signed anew
    if (!row || row.signature === null) {
      // a new send: one payment per source account in flight, so the fee payer pays for no transaction its balance cannot
      if (source && !(await leases.acquire(source, f.messageHash))) {
        throw new Unstored({
          success: false, errorReason: REASONS.sourceBusy, transaction: '', network: r.network,
          errorMessage: `another payment from token account ${source} is being settled; send this one again once it is confirmed`,
        });
      }
      await claimSettlement(db, f, deps.clock.now()).catch(async (err: unknown) => { await free(); throw err; });
    } else if (await neverLands(io, tx, row.signature)) {
      const answer: SettleResponse = {
        success: false, errorReason: REASONS.expired, errorMessage: 'the transaction expired without landing: nothing was taken; sign a new payment',
        transaction: row.signature, network: r.network,
      };
      await markFailedOnChain(db, f.messageHash, answer);
      await free();
      throw new Unstored(answer);
    } else {
      const wire = (payload.payload as { transaction: string }).transaction;
      await resendWhileItCanLand(io, async () => (await schemeNow()).signer, tx, wire, r, row.signature);
    }
    let answer: SettleResponse;
    try {
      answer = await (await schemeNow()).scheme.settle(payload, r);
    } catch (err) {
      // the package answers every failure after its send; a throw sent nothing
      await free();
      throw err;
    }
    if (await inDoubt(answer)) {
      // sent and its fate unknown: the row stays sending with its signature, the lease held, for the next settle to confirm
      throw new Unstored(answer.errorReason === REASONS.pending ? answer : {
        ...answer, errorReason: REASONS.pending, errorMessage: `not confirmed yet; send the same payment again to confirm it (${answer.errorMessage ?? ''})`,
      });
    }
    await free();
    if (answer.success) {
      if (await recordSettled({ db, rooms: deps.rooms }, { ...f, payer: answer.payer || f.payer }, answer, deps.clock.now())) await deps.recorded?.().catch(() => undefined);
      return toStored(answer);
    }
    if (answer.transaction !== '' && answer.errorReason === REASONS.failed) await markFailedOnChain(db, f.messageHash, answer);
    else await releaseUnsent(db, f.messageHash);
    throw new Unstored(answer);
  }

  return {
    async supportedKind(network) {
      if (!EXACT_NETWORKS.includes(deps.network) || network !== deps.network) return undefined;
      const { addresses } = await schemeNow();
      const feePayer = addresses[0] ?? '';
      return { kind: { x402Version: 2, scheme: 'exact', network: network as Network, extra: { feePayer } }, signers: addresses };
    },

    async verify(payload, r) {
      const pre = await preChecks(deps.network, payload, r);
      if (pre.reason !== undefined) return { isValid: false, invalidReason: pre.reason, ...(pre.message ? { invalidMessage: pre.message } : {}) };
      const row = await readSettlement(db, transactionMessageHash(pre.tx));
      const payer = getTokenPayerFromTransaction(pre.tx) ?? '';
      // failed for good (on chain, or expired without landing): why, as settle answers it
      if (row?.state === 'failed' && row.signature !== null && row.answer) {
        const { errorReason, errorMessage } = row.answer;
        return withPayer({ isValid: false, invalidReason: errorReason ?? REASONS.failed, ...(errorMessage ? { invalidMessage: errorMessage } : {}), payer });
      }
      if (row && (row.state === 'settled' || row.signature !== null)) {
        return withPayer({ isValid: false, invalidReason: REASONS.duplicate, invalidMessage: 'this transaction was settled already (or is being settled)', payer });
      }
      const { scheme } = await schemeNow();
      return withPayer(await scheme.verify(payload, r));
    },

    serveOnce: (transaction, terms) => claimServed(db, transaction, terms),

    async settle(payload, r, caller) {
      const pre = await preChecks(deps.network, payload, r);
      if (pre.reason !== undefined) return { success: false, errorReason: pre.reason, ...(pre.message ? { errorMessage: pre.message } : {}), transaction: '', network: r.network };
      const f = factsOf(pre.tx, payload, r, caller);
      let owned = false;
      try {
        const answer = withPayer(fromStored(await idem.once(f.messageHash, () => { owned = true; return settleOwned(payload, r, pre.tx, f); })));
        if (owned || !answer.success) return answer;
        // Redis's stored answer (or the owner's, to a copy that waited) is keyed by the transaction only: the ledger's row says whose it is
        const row = await readSettlement(db, f.messageHash);
        const elsewhere = row ? otherTerms(row, f) : 'its settlement is not in the ledger';
        return elsewhere ? settledElsewhere(elsewhere, r.network) : answer;
      } catch (err) {
        if (err instanceof Unstored) return withPayer(err.answer);
        throw err;
      }
    },
  };
}
