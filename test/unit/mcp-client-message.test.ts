/**
 * What an MCP client may read of a failure (commands/x402/mcp/paid-tool.ts clientMessage):
 * a typed refusal as it is, an unreachable upstream without the driver's detail, and
 * nothing of an unexpected error.
 */
import { expect } from 'chai';
import { AppError, conflict, invalid, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { clientMessage } from '../../commands/x402/mcp/paid-tool.js';

describe('clientMessage: what an MCP tool error may tell', () => {
  it('tells a typed refusal as it is', () => {
    expect(clientMessage(invalid('walletPublicKey is not a base58 public key of 32 bytes'))).to.equal('walletPublicKey is not a base58 public key of 32 bytes');
    expect(clientMessage(conflict('the payment is settling elsewhere'))).to.equal('the payment is settling elsewhere');
  });

  it('cuts an unreachable upstream\'s detail, which can name a host or a URL with a key', () => {
    const told = clientMessage(upstreamUnavailable('the chain did not answer getAccountInfo: RPC failed: connect ECONNREFUSED https://rpc.example/?api-key=s3cret'));
    expect(told).to.equal('the chain did not answer getAccountInfo; try again');
    expect(clientMessage(upstreamUnavailable('pay-as-you-go metering is unavailable: password authentication failed for user "root" at db.internal:5432')))
      .to.equal('pay-as-you-go metering is unavailable; try again');
  });

  it('tells nothing of an internal or an untyped error', () => {
    expect(clientMessage(new AppError('internal', 'postgres://root:pw@db/x'))).to.equal(undefined);
    expect(clientMessage(new Error('postgres://root:pw@db/x'))).to.equal(undefined);
    expect(clientMessage('boom')).to.equal(undefined);
  });
});
