/** JSON-RPC errors with Solana's codes, and parameter readers that raise them. */

export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }

  /** the same error worded as the node words it (some params errors say "Invalid param:") */
  withMessage(message: string): RpcError {
    return new RpcError(this.code, message, this.data);
  }
}

/**
 * An answer that never reaches the client as JSON-RPC (the hostile chain's faults): the
 * connection dropped, or an HTTP status from a proxy in front of the node. It loses the
 * whole HTTP response, a batch's other answers included, as a proxy's would.
 */
export class HttpFault extends Error {
  constructor(readonly status: 'drop' | 429 | 502, readonly body = '') {
    super(`http fault ${status}`);
  }
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** Solana: preflight simulation of sendTransaction failed */
export const SEND_TRANSACTION_PREFLIGHT_FAILURE = -32002;
/** Solana: transaction signature verification failure */
export const TRANSACTION_SIGNATURE_VERIFICATION_FAILURE = -32003;
/** Solana: no block for the slot asked (not produced yet) */
export const BLOCK_NOT_AVAILABLE = -32004;
/** Solana: the node is behind the cluster (data: {numSlotsBehind}) */
export const NODE_UNHEALTHY = -32005;
/** Solana: the transaction's version is above maxSupportedTransactionVersion */
export const UNSUPPORTED_TRANSACTION_VERSION = -32015;

export const invalidParams = (detail: string): RpcError => new RpcError(INVALID_PARAMS, `Invalid params: ${detail}`);

export type Params = readonly unknown[];

export function stringParam(params: Params, i: number, what: string): string {
  const v = params[i];
  if (typeof v !== 'string') throw invalidParams(`${what} must be a string`);
  return v;
}

export function configParam(params: Params, i: number): Record<string, unknown> {
  const v = params[i];
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidParams('configuration must be an object');
  return v as Record<string, unknown>;
}

export function optionalNumber(cfg: Record<string, unknown>, key: string): number | undefined {
  const v = cfg[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalidParams(`${key} must be a non-negative integer`);
  return v;
}

export function optionalString(cfg: Record<string, unknown>, key: string): string | undefined {
  const v = cfg[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidParams(`${key} must be a string`);
  return v;
}
