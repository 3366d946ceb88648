/**
 * What the x402 `exact` tests share: the devnet localnet (test/support/devnet.ts), the
 * service's exact facilitator on it with a funded fee payer, a merchant, and payment
 * payloads built as @x402/svm's exact client builds them, or with one thing changed (a
 * tampered payment, built the same way and signed by the payer).
 */
import { PublicKey } from '@solana/web3.js';
import {
  AccountRole, appendTransactionMessageInstructions, createSolanaRpc, createTransactionMessage, getBase64EncodedWireTransaction, partiallySignTransactionMessageWithSigners,
  pipe, prependTransactionMessageInstruction, setTransactionMessageFeePayer, setTransactionMessageLifetimeUsingBlockhash, type Address, type Instruction, type KeyPairSigner,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, setTransactionMessageComputeUnitPrice } from '@solana-program/compute-budget';
import { findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { PendingSettlementStore } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { createRpcClient, RpcUnavailableError, type RpcClient } from '../../infra/solana/rpc-client.js';
import { fundWallet } from '../../infra/localnet/genesis.js';
import { systemClock } from '../../src/kernel/domain/clock.js';
import { createExactFacilitator, type ExactFacilitator } from '../../commands/x402/exact/facilitator.js';
import type { RoomEmitter } from '../../commands/scheduler/lifecycle-events.js';
import { DEVNET_NETWORK, DEVNET_USDC, startDevnetLocalnet, type DevnetLocalnet, type DevnetWallet } from '../support/devnet.js';
import type { TestEnv } from '../support/env.js';

export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;
export const PRICE_CAP = 50_000;

export interface ExactWorld {
  dn: DevnetLocalnet;
  facilitator: ExactFacilitator;
  feePayer: string;
  merchant: DevnetWallet;
  /** every sendTransaction the facilitator made */
  sends: string[];
  requirements(over?: Partial<PaymentRequirements> & { memo?: string }): PaymentRequirements;
  /** another node's facilitator: the same database, Redis and chain, nothing of this one's memory (its sends counted in `sends`) */
  secondNode(): ExactFacilitator;
  /** a payment as @x402/svm's exact client builds it */
  pay(payer: DevnetWallet, r: PaymentRequirements, resource?: string): Promise<PaymentPayload>;
  close(): Promise<void>;
}

/** Network faults between the facilitator and the (real) localnet, switched on by a test. */
export interface Faults {
  /** a send reaches the node, its answer is lost */
  loseSendAnswers?: boolean;
  /** signature statuses get no answer */
  noStatuses?: boolean;
  /** a send never reaches the node (and gets no answer) */
  dropSends?: boolean;
}

/** The facilitator's RPC, counting its sends; every call reaches the real localnet unless a fault drops it. */
function countingRpc(url: string, sends: string[], faults: Faults): RpcClient {
  const rpc = createRpcClient({ url, timeoutMs: 5000 });
  return {
    url,
    call: async (method, params, opts) => {
      if (method === 'getSignatureStatuses' && faults.noStatuses) throw new RpcUnavailableError('fault: no answer', method);
      if (method === 'sendTransaction') sends.push(String(params?.[0]));
      if (method === 'sendTransaction' && faults.dropSends) throw new RpcUnavailableError('fault: the send was lost on its way', method);
      const answer = await rpc.call(method, params, opts);
      if (method === 'sendTransaction' && faults.loseSendAnswers) throw new RpcUnavailableError('fault: the answer was lost', method);
      return answer as never;
    },
    batch: (method, list, opts) => rpc.batch(method, list, opts),
  };
}

export async function startExactWorld(
  env: TestEnv, opts: { rooms?: RoomEmitter; seed?: string; faults?: Faults; confirmTimeoutMs?: number; pendingStore?: PendingSettlementStore } = {},
): Promise<ExactWorld> {
  const dn = await startDevnetLocalnet(opts.seed ?? 'exact-test');
  const sends: string[] = [];
  const node = () => createExactFacilitator({
    db: env.db, redis: env.redis, keyPrefix: env.prefix, rpc: countingRpc(dn.rpcUrl, sends, opts.faults ?? {}), commitment: 'confirmed', network: DEVNET_NETWORK,
    encryptionKey: Buffer.alloc(32, 7), clock: systemClock,
    settings: { maxPriorityFeeMicroLamports: PRICE_CAP, maxComputeUnits: 400_000, confirmTimeoutMs: opts.confirmTimeoutMs ?? 10_000, idempotencyTtlSeconds: 600, keyCacheMs: 0 },
    ...(opts.rooms ? { rooms: opts.rooms } : {}),
    ...(opts.pendingStore ? { pendingStore: opts.pendingStore } : {}),
  });
  const facilitator = node();
  const kind = await facilitator.supportedKind(DEVNET_NETWORK);
  const feePayer = String(kind?.kind.extra?.['feePayer']);
  // SOL for fees only: the fee payer's tokens, if any, are never touched
  fundWallet(dn.ln.chain, new PublicKey(feePayer), 0n);
  const merchant = dn.fund('merchant');
  return {
    dn, facilitator, feePayer, merchant, sends, secondNode: node,
    requirements: ({ memo, ...over } = {}) => ({
      scheme: 'exact', network: DEVNET_NETWORK, amount: '1250000', asset: DEVNET_USDC, payTo: merchant.address, maxTimeoutSeconds: 60,
      extra: { feePayer, ...(memo !== undefined ? { memo } : {}) }, ...over,
    }),
    async pay(payer, r, resource = 'https://merchant.example/report') {
      const client = new ExactSvmClient(await payer.signer(), { rpcUrl: dn.rpcUrl });
      const { payload } = await client.createPaymentPayload(2, r);
      return { x402Version: 2, resource: { url: resource, description: 'a report', mimeType: 'application/json' }, accepted: r, payload };
    },
    close: () => dn.close(),
  };
}

export interface Tamper {
  amount?: bigint;
  payTo?: string;
  asset?: string;
  price?: number;
  /** extra instructions after the transfer */
  extra?: (signer: KeyPairSigner) => Instruction[];
  /** accounts listed on the memo instruction */
  memoAccounts?: Address[];
}

/** A payment for `r` as the exact client builds it, with `t` changed, signed by the payer. */
export async function tamperedPayment(w: ExactWorld, payer: DevnetWallet, r: PaymentRequirements, t: Tamper): Promise<PaymentPayload> {
  const signer = await payer.signer();
  const asset = (t.asset ?? r.asset) as Address;
  const program = asset === DEVNET_USDC ? TOKEN_PROGRAM_ADDRESS : TOKEN_2022_PROGRAM_ADDRESS;
  const [source] = await findAssociatedTokenPda({ mint: asset, owner: signer.address, tokenProgram: program });
  const [destination] = await findAssociatedTokenPda({ mint: asset, owner: (t.payTo ?? r.payTo) as Address, tokenProgram: program });
  const transfer = getTransferCheckedInstruction(
    { source, mint: asset, destination, authority: signer, amount: t.amount ?? BigInt(r.amount), decimals: 6 }, { programAddress: program },
  );
  const memo: Instruction = {
    programAddress: MEMO_PROGRAM, accounts: (t.memoAccounts ?? []).map((address) => ({ address, role: AccountRole.READONLY })),
    data: new TextEncoder().encode(typeof r.extra['memo'] === 'string' ? r.extra['memo'] : `nonce-${Math.random().toString(16).slice(2)}`),
  };
  const { value: blockhash } = await createSolanaRpc(w.dn.rpcUrl).getLatestBlockhash().send();
  const msg = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageComputeUnitPrice(t.price ?? 1, m),
    (m) => setTransactionMessageFeePayer(String(r.extra['feePayer']) as Address, m),
    (m) => prependTransactionMessageInstruction(getSetComputeUnitLimitInstruction({ units: 20_000 }), m),
    (m) => appendTransactionMessageInstructions([transfer, memo, ...(t.extra?.(signer) ?? [])], m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
  );
  const signed = await partiallySignTransactionMessageWithSigners(msg);
  return {
    x402Version: 2, resource: { url: 'https://merchant.example/report', description: 'a report', mimeType: 'application/json' },
    accepted: r, payload: { transaction: getBase64EncodedWireTransaction(signed) },
  };
}
