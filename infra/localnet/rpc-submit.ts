/**
 * sendTransaction and simulateTransaction with Solana's request and error shapes: a
 * failed preflight is JSON-RPC error -32002 carrying the simulation (err, logs), a bad
 * signature -32003; skipPreflight lands a failing transaction as failed (fee paid).
 */
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Chain } from './chain.js';
import type { TransactionError } from './executor.js';
import {
  configParam, invalidParams, optionalString, RpcError, SEND_TRANSACTION_PREFLIGHT_FAILURE, stringParam,
  TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, type Params,
} from './rpc-errors.js';
import { submitTransaction, type Rejection } from './submit.js';
import type { FaultySend } from './send-faults.js';
import { describeTransactionError } from '../../src/kernel/domain/program-errors.js';

function decodeTransaction(encoded: string, encoding: string): VersionedTransaction {
  try {
    const bytes = encoding === 'base64' ? Buffer.from(encoded, 'base64') : Buffer.from(bs58.decode(encoded));
    return VersionedTransaction.deserialize(bytes);
  } catch (e) {
    throw invalidParams(`failed to deserialize solana_transaction::versioned::VersionedTransaction: ${(e as Error).message}`);
  }
}

const REJECTION_TEXT: Record<Rejection, string> = {
  SignatureFailure: 'Transaction signature verification failure',
  BlockhashNotFound: 'Blockhash not found',
  AlreadyProcessed: 'This transaction has already been processed',
  AccountNotFound: 'Attempt to debit an account but found no record of a prior credit.',
  UnsupportedVersion: 'Transactions with address table lookups are not supported by the localnet',
  InsufficientFundsForFee: 'Insufficient funds for fee',
  InvalidComputeBudget: 'Transaction has an invalid Compute Budget instruction',
};

const refuse = (reason: Rejection): never => {
  throw rejection(reason);
};

function rejection(reason: Rejection): RpcError {
  if (reason === 'SignatureFailure') return new RpcError(TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, REJECTION_TEXT[reason]);
  if (reason === 'UnsupportedVersion') return invalidParams(REJECTION_TEXT[reason]);
  return new RpcError(SEND_TRANSACTION_PREFLIGHT_FAILURE, `Transaction simulation failed: ${REJECTION_TEXT[reason]}`, {
    accounts: null, err: reason, innerInstructions: null, logs: [], returnData: null, unitsConsumed: 0,
  });
}

/**
 * "Error processing Instruction 0: ProgramPaused (6000): Program is paused (custom program
 * error: 0x1770)": the bank's wording, with the program's error named as the logs name it.
 */
export function describeError(err: TransactionError, logs: readonly string[] = []): string {
  if (typeof err === 'string') return err;
  if (!('InstructionError' in err)) return `Transaction contains a duplicate instruction (${err.DuplicateInstruction}) that is not allowed`;
  const [index, detail] = err.InstructionError;
  if (typeof detail === 'string') return `Error processing Instruction ${index}: ${detail}`;
  const raw = `custom program error: 0x${detail.Custom.toString(16)}`;
  const named = describeTransactionError(err, logs).replace(/ \(instruction \d+\)$/, '');
  return `Error processing Instruction ${index}: ${named === raw ? raw : `${named} (${raw})`}`;
}

/** `faultySend`: the hostile chain's landing and answers, when its faults are on */
export function submitMethods(chain: Chain, faultySend?: FaultySend): Record<string, (p: Params) => unknown> {
  return {
    sendTransaction: (p) => {
      const cfg = configParam(p, 1);
      const tx = decodeTransaction(stringParam(p, 0, 'transaction'), optionalString(cfg, 'encoding') ?? 'base58');
      const skipPreflight = cfg.skipPreflight === true;
      if (!skipPreflight) {
        const pre = submitTransaction(chain, tx, { verifySignatures: true, commit: false });
        if (pre.kind === 'rejected') throw rejection(pre.reason);
        const { err, logs, unitsConsumed } = pre.result;
        if (err !== null) {
          throw new RpcError(SEND_TRANSACTION_PREFLIGHT_FAILURE, `Transaction simulation failed: ${describeError(err, logs)}`, {
            accounts: null, err, innerInstructions: null, logs, returnData: null, unitsConsumed,
          });
        }
      }
      if (faultySend) return faultySend(tx, skipPreflight, refuse);
      const out = submitTransaction(chain, tx, { verifySignatures: true, commit: true });
      if (out.kind === 'rejected') {
        // without preflight an unlandable transaction is simply dropped, as a leader would
        if (skipPreflight && out.reason !== 'SignatureFailure') return bs58.encode(tx.signatures[0] ?? new Uint8Array(64));
        throw rejection(out.reason);
      }
      return out.record?.signature;
    },
    simulateTransaction: (p) => {
      const cfg = configParam(p, 1);
      const sigVerify = cfg.sigVerify === true;
      const replace = cfg.replaceRecentBlockhash === true;
      if (sigVerify && replace) throw invalidParams('sigVerify may not be used with replaceRecentBlockhash');
      const tx = decodeTransaction(stringParam(p, 0, 'transaction'), optionalString(cfg, 'encoding') ?? 'base58');
      const out = submitTransaction(chain, tx, { verifySignatures: sigVerify, commit: false, ignoreBlockhash: replace });
      const context = { slot: chain.slot(), apiVersion: '2.1.21' };
      if (out.kind === 'rejected') {
        if (out.reason === 'SignatureFailure') throw rejection(out.reason);
        return { context, value: { err: out.reason, logs: [], accounts: null, unitsConsumed: 0, returnData: null, innerInstructions: null } };
      }
      const r = out.result;
      const value: Record<string, unknown> = {
        err: r.err, logs: r.logs, accounts: null, unitsConsumed: r.unitsConsumed, returnData: null,
        innerInstructions: cfg.innerInstructions === true ? r.innerInstructions : null,
      };
      if (replace) value.replacementBlockhash = chain.latestBlockhash();
      return { context, value };
    },
  };
}
