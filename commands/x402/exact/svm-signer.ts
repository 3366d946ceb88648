/**
 * The FacilitatorSvmSigner the @x402/svm `exact` facilitator runs on: the service's fee
 * payer keys, and the service's own chain access instead of the package's public-cluster
 * RPC clients (which know only mainnet, devnet and testnet URLs).
 *
 * - Signing is the package's own (toFacilitatorSvmSigner per key).
 * - Simulation goes to SOLANA_RPC_URL (or the built-in localnet).
 * - Sending goes through infra/solana/sender.ts. The signature is the fee payer's
 *   (deterministic for the message), so it is recorded (`recordSent`) before the first
 *   send: a send whose answer is lost is in doubt, never "failed". Only a preflight
 *   refusal (nothing landed) throws; an in-doubt send is reported sent and left to confirm.
 * - Confirmation polls statuses with the history searched, at the settlement commitment;
 *   a transaction the chain failed throws TransactionOnchainFailureError (terminal), a
 *   timeout a plain Error (the package then answers `settlement_pending`).
 */
import { createKeyPairSignerFromBytes, getBase58Decoder, type Address } from '@solana/kit';
import {
  decodeTransactionFromPayload, toFacilitatorSvmSigner, transactionMessageHash, TransactionOnchainFailureError, type FacilitatorSvmSigner,
} from '@x402/svm';
import type { RpcClient } from '../../../infra/solana/rpc-client.js';
import type { Commitment } from '../../../infra/solana/chain-reader.js';
import { confirm, send } from '../../../infra/solana/sender.js';
import type { FeePayerKey } from './fee-payers.js';

export interface SentRecorder {
  /** durably notes that `signature` (of the message `messageHash`) is about to be sent */
  recordSent(messageHash: string, signature: string): Promise<void>;
  /** the send was refused at preflight: nothing landed, the signature is free again */
  recordRefused(messageHash: string): Promise<void>;
}

export interface ServiceSignerDeps {
  rpc: RpcClient;
  commitment: Commitment;
  confirmTimeoutMs: number;
  recorder: SentRecorder;
}

/** The transaction's own signature: the first one, the fee payer's. */
export function signatureOfWire(wire: string): { signature: string; messageHash: string } {
  const tx = decodeTransactionFromPayload({ transaction: wire });
  const first = Object.values(tx.signatures)[0];
  if (!first) throw new Error('the transaction carries no signature slot');
  return { signature: getBase58Decoder().decode(first), messageHash: transactionMessageHash(tx) };
}

export async function createServiceSvmSigner(keys: readonly FeePayerKey[], deps: ServiceSignerDeps): Promise<FacilitatorSvmSigner> {
  const byAddress = new Map<string, FacilitatorSvmSigner>();
  for (const k of keys) byAddress.set(k.address, toFacilitatorSvmSigner(await createKeyPairSignerFromBytes(k.secretKey)));
  const addresses = keys.map((k) => k.address as Address);
  const io = { rpc: deps.rpc, commitment: deps.commitment };

  return {
    getAddresses: () => addresses,
    async signTransaction(transaction, feePayer, network) {
      const signer = byAddress.get(feePayer);
      if (!signer) throw new Error(`no fee payer key ${feePayer} on this service`);
      return signer.signTransaction(transaction, feePayer, network);
    },
    async simulateTransaction(transaction, _network, options) {
      const r = await deps.rpc.call<{ value: { err: unknown; logs?: string[] | null } }>('simulateTransaction', [transaction, {
        sigVerify: options?.sigVerify ?? false, replaceRecentBlockhash: options?.replaceRecentBlockhash ?? false,
        commitment: options?.commitment ?? 'confirmed', encoding: 'base64',
      }]);
      if (r.value.err) throw new Error(`Simulation failed: ${JSON.stringify(r.value.err)}`);
    },
    async sendTransaction(transaction) {
      const { signature, messageHash } = signatureOfWire(transaction);
      await deps.recorder.recordSent(messageHash, signature);
      const r = await send(io, transaction);
      if (r.kind === 'refused') {
        await deps.recorder.recordRefused(messageHash);
        throw new Error(`the chain refused the transaction at preflight: ${r.refusal.message}`);
      }
      return signature;
    },
    async confirmTransaction(signature) {
      const fate = await confirm(io, signature, { timeoutMs: deps.confirmTimeoutMs, history: true });
      if (fate.kind === 'landed') return;
      if (fate.kind === 'failed') throw new TransactionOnchainFailureError(`Transaction failed onchain: ${fate.refusal.message}`);
      throw new Error(`transaction ${signature} not confirmed within ${deps.confirmTimeoutMs} ms (${fate.kind})`);
    },
  };
}
