/**
 * What a node's answer to sendTransaction means. Only a preflight failure carrying a
 * program error is a refusal; a node behind, a rate limit or an unknown code says nothing
 * of whether the bytes land, and must never put a charge's usage back.
 */
import { expect } from 'chai';
import { classifyRpcError } from '../../infra/solana/rpc-error-class.js';
import { RpcResponseError, RpcUnavailableError } from '../../infra/solana/rpc-client.js';
import { sendResultOf } from '../../infra/solana/sender.js';

const rpcError = (code: number, message: string, data?: unknown) => new RpcResponseError(code, message, 'sendTransaction', data);
const kindOf = (e: RpcResponseError | RpcUnavailableError) => classifyRpcError(e).kind;

describe('JSON-RPC errors of a send, classified by code and message', () => {
  it('a preflight failure with an instruction error is the program\'s refusal, named from its logs or code', () => {
    const logs = ['Program log: AnchorError occurred. Error Code: InsufficientBalance. Error Number: 6007. Error Message: Insufficient balance for payment.'];
    const c = classifyRpcError(rpcError(-32002, 'Transaction simulation failed: Error processing Instruction 1: custom program error: 0x1777', {
      err: { InstructionError: [1, { Custom: 6007 }] }, logs,
    }));
    expect(c).to.deep.include({ kind: 'program_refusal', name: 'InsufficientBalance' });
    const token = classifyRpcError(rpcError(-32002, 'Transaction simulation failed', { err: { InstructionError: [0, { Custom: 1 }] }, logs: [] }));
    expect(token.name).to.equal('TokenInsufficientFunds');
  });

  it('node unhealthy or behind (-32005 and kin) is not a refusal', () => {
    expect(kindOf(rpcError(-32005, 'Node is behind by 42 slots', { numSlotsBehind: 42 }))).to.equal('node_unhealthy');
    expect(kindOf(rpcError(-32016, 'Minimum context slot has not been reached'))).to.equal('node_unhealthy');
    expect(sendResultOf(rpcError(-32005, 'Node is unhealthy')).kind).to.equal('in_doubt');
  });

  it('rate limits: HTTP 429, -32429, or the words', () => {
    expect(kindOf(new RpcUnavailableError('RPC sendTransaction answered HTTP 429', 'sendTransaction', 429))).to.equal('rate_limited');
    expect(kindOf(rpcError(-32429, 'rate limited'))).to.equal('rate_limited');
    expect(kindOf(rpcError(-32000, 'Too many requests for a specific RPC call'))).to.equal('rate_limited');
    expect(kindOf(new RpcUnavailableError('RPC sendTransaction answered HTTP 503', 'sendTransaction', 503))).to.equal('no_answer');
  });

  it('blockhash not found and already processed, by the simulation\'s err or the message', () => {
    expect(kindOf(rpcError(-32002, 'Transaction simulation failed: Blockhash not found', { err: 'BlockhashNotFound', logs: [] }))).to.equal('blockhash_not_found');
    expect(kindOf(rpcError(-32002, 'Transaction simulation failed: Blockhash not found'))).to.equal('blockhash_not_found');
    expect(kindOf(rpcError(-32002, 'x', { err: 'AlreadyProcessed', logs: [] }))).to.equal('already_processed');
    expect(sendResultOf(rpcError(-32002, 'This transaction has already been processed')).kind).to.equal('sent');
  });

  it('a transaction-level preflight failure is rejected, not a program refusal; anything else unknown', () => {
    expect(kindOf(rpcError(-32002, 'Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.', { err: 'AccountNotFound', logs: [] }))).to.equal('rejected');
    expect(kindOf(rpcError(-32003, 'Transaction signature verification failure'))).to.equal('rejected');
    expect(kindOf(rpcError(-32603, 'Internal error'))).to.equal('unknown');
    expect(sendResultOf(rpcError(-32603, 'Internal error')).kind).to.equal('in_doubt');
  });
});
