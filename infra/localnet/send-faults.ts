/**
 * sendTransaction on the hostile chain: a transaction the node accepts may land some
 * slots later (its status null until then), and the answer to an accepted send may be
 * lost or be an error although the transaction went through. A transaction waiting to
 * land is checked again when its slot comes, as a leader would: one whose blockhash
 * expired meanwhile is dropped and can never land.
 */
import type { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Chain } from './chain.js';
import type { Faults, LostAnswer, SendError } from './faults.js';
import { HttpFault, INTERNAL_ERROR, NODE_UNHEALTHY, RpcError } from './rpc-errors.js';
import { verifyTransaction } from './signatures.js';
import { submitTransaction, type Rejection } from './submit.js';

export type FaultySend = (tx: VersionedTransaction, skipPreflight: boolean, reject: (r: Rejection) => never) => string;

const RATE_LIMIT_BODY = JSON.stringify({ jsonrpc: '2.0', error: { code: 429, message: 'Too many requests for a specific RPC call' }, id: null });

function lost(how: LostAnswer): Error {
  if (how === 'connection-dropped') return new HttpFault('drop');
  if (how === 'http-502') return new HttpFault(502, '<html><body><h1>502 Bad Gateway</h1></body></html>');
  return new RpcError(INTERNAL_ERROR, 'Internal error');
}

function sendError(e: SendError): Error {
  if (e.kind === 'rate-limit') return new HttpFault(429, RATE_LIMIT_BODY);
  return new RpcError(NODE_UNHEALTHY, `Node is behind by ${e.numSlotsBehind} slots`, { numSlotsBehind: e.numSlotsBehind });
}

export function createFaultySend(chain: Chain, faults: Faults): FaultySend {
  const waiting = new Map<string, { tx: VersionedTransaction; at: number }>();
  chain.onSlot((slot) => {
    for (const [signature, w] of waiting) {
      if (w.at > slot) continue;
      waiting.delete(signature);
      // a rejection now (blockhash expired, already processed) drops it, as a leader would
      submitTransaction(chain, w.tx, { verifySignatures: false, commit: true });
    }
  });

  /** false when, without preflight, the transaction is dropped unseen (as the plain path drops it) */
  const accept = (tx: VersionedTransaction, signature: string, skipPreflight: boolean, reject: (r: Rejection) => never): boolean => {
    const delay = faults.landingDelay(signature);
    if (delay === 0) {
      const out = submitTransaction(chain, tx, { verifySignatures: true, commit: true });
      if (out.kind === 'executed') return true;
      if (!skipPreflight || out.reason === 'SignatureFailure') reject(out.reason);
      return false;
    }
    // the checks landing makes at once; execution waits for the slot
    if (!verifyTransaction(tx)) reject('SignatureFailure');
    const refused: Rejection | undefined = chain.blockhashSlot(tx.message.recentBlockhash) === undefined ? 'BlockhashNotFound'
      : chain.transaction(signature) ? 'AlreadyProcessed' : undefined;
    if (refused && !skipPreflight) reject(refused);
    if (refused) return false;
    waiting.set(signature, { tx, at: chain.slot() + delay });
    return true;
  };

  return (tx, skipPreflight, reject) => {
    const signature = bs58.encode(tx.signatures[0] ?? new Uint8Array(64));
    // a resend of a transaction still waiting to land is the same transaction
    if (waiting.has(signature)) return signature;
    if (!accept(tx, signature, skipPreflight, reject)) return signature;
    const answer = faults.answer(signature);
    if (answer && 'lost' in answer) throw lost(answer.lost);
    if (answer) throw sendError(answer.error);
    return signature;
  };
}
