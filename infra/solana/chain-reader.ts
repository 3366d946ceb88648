/**
 * The indexer's reads from the chain, each retried with exponential backoff (p-retry)
 * when the node is unreachable, rate-limits (HTTP 429), or answers with one of Solana's
 * transient errors. Anything else (a malformed request) fails at once.
 *
 * Types are the JSON shapes of Solana's API (`encoding: "json"`), narrowed to what the
 * indexer reads.
 */
import pRetry, { type Options as PRetryOptions } from 'p-retry';
import type { Logger } from 'pino';
import { RpcResponseError, RpcUnavailableError, type RpcClient } from './rpc-client.js';

export type Commitment = 'processed' | 'confirmed' | 'finalized';

/**
 * The commitment at which money counts as moved (a payment settled, a charge executed):
 * the configured one, but never `processed`, which a fork can still drop. Reads may be
 * fresher; a JWT, an executed intent or a charged chunk may not rest on a processed block.
 */
export function settlementCommitment(configured: Commitment): Commitment {
  return configured === 'processed' ? 'confirmed' : configured;
}

export interface SignatureInfo { signature: string; slot: number; err: unknown; blockTime?: number | null }

export interface CompiledInstructionJson { programIdIndex: number; accounts: number[]; data: string; stackHeight?: number | null }

export interface TransactionJson {
  slot: number;
  blockTime?: number | null;
  transaction: {
    signatures: string[];
    message: { accountKeys: string[]; instructions: CompiledInstructionJson[] };
  };
  meta: {
    err: unknown;
    logMessages?: string[] | null;
    innerInstructions?: { index: number; instructions: CompiledInstructionJson[] }[] | null;
    loadedAddresses?: { writable: string[]; readonly: string[] } | null;
  } | null;
}

/**
 * Solana's server errors worth retrying: node behind / unhealthy (-32005), block or slot
 * not yet available (-32004, -32007, -32009, -32014), minimum context slot not reached (-32016).
 */
const TRANSIENT_CODES = new Set([-32004, -32005, -32007, -32009, -32014, -32016]);

export function isTransient(err: unknown): boolean {
  if (err instanceof RpcUnavailableError) return true;
  return err instanceof RpcResponseError && TRANSIENT_CODES.has(err.code);
}

export interface RetryPolicy { retries: number; minTimeoutMs: number; maxTimeoutMs: number }
export const DEFAULT_RETRY: RetryPolicy = { retries: 8, minTimeoutMs: 100, maxTimeoutMs: 5_000 };

export interface ChainReader {
  getSlot(): Promise<number>;
  /** newest first, as the RPC returns them */
  getSignaturesForAddress(address: string, opts: { before?: string; until?: string; limit: number }): Promise<SignatureInfo[]>;
  getTransaction(signature: string): Promise<TransactionJson | null>;
  /**
   * Many transactions in one batch request, in the order asked; null where the node has
   * none yet. A transient failure of the batch, or of any call in it, retries the batch.
   */
  getTransactions(signatures: readonly string[]): Promise<(TransactionJson | null)[]>;
}

export function createChainReader(
  rpc: RpcClient, opts: { commitment: Commitment; logger?: Logger; retry?: RetryPolicy; signal?: AbortSignal },
): ChainReader {
  const policy = opts.retry ?? DEFAULT_RETRY;
  const txConfig = {
    encoding: 'json', maxSupportedTransactionVersion: 0,
    commitment: opts.commitment === 'processed' ? 'confirmed' : opts.commitment,
  };
  const retryOptions = (method: string): PRetryOptions => ({
      retries: policy.retries,
      minTimeout: policy.minTimeoutMs,
      maxTimeout: policy.maxTimeoutMs,
      factor: 2,
      randomize: true,
      shouldRetry: ({ error }) => isTransient(error),
      onFailedAttempt: ({ error, attemptNumber }) => {
        opts.logger?.warn({ method, attempt: attemptNumber, err: error.message }, 'solana rpc call failed; retrying');
      },
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  const call = <T>(method: string, params: unknown[]): Promise<T> => pRetry(() => rpc.call<T>(method, params), retryOptions(method));
  return {
    getSlot: () => call<number>('getSlot', [{ commitment: opts.commitment }]),
    getSignaturesForAddress: (address, o) => call<SignatureInfo[]>('getSignaturesForAddress', [address, {
      limit: o.limit, commitment: opts.commitment === 'processed' ? 'confirmed' : opts.commitment,
      ...(o.before ? { before: o.before } : {}), ...(o.until ? { until: o.until } : {}),
    }]),
    getTransaction: (signature) => call<TransactionJson | null>('getTransaction', [signature, txConfig]),
    getTransactions: (signatures) => pRetry(async () => {
      const results = await rpc.batch<TransactionJson | null>('getTransaction', signatures.map((s) => [s, txConfig]));
      return results.map((r) => {
        if (r instanceof RpcResponseError) throw r;
        return r;
      });
    }, retryOptions('getTransaction (batch)')),
  };
}
