/** The six filters of the policy lists, resolved: each rule, and each meaning. */
import { expect } from 'chai';
import { resolveFilters, type FilterQuery, type ListEndpoint } from '../../queries/policies/filters.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { AppError } from '../../src/kernel/http/errors.js';

const pda = createPdaDeriver(PROGRAM_ID);
const DEFAULT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const A = 'AU4grQhj3xF9NQ9Yn8xeJDdFBiz9P9xCsvoAfXYNs7qt';
const B = 'U3Wxj2mS6E2RUrNVTnZtKAwufsvbqboBtS5FrHuzTbd';
const MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const resolve = (q: FilterQuery, endpoint: ListEndpoint = 'payment-policies') => resolveFilters(q, endpoint, { defaultMint: DEFAULT, pda });
const rejected = (q: FilterQuery, endpoint?: ListEndpoint): string => {
  try {
    resolve(q, endpoint);
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).status).to.equal(400);
    return (err as Error).message;
  }
  throw new Error('accepted');
};

describe('domain: policy list filters', () => {
  it('needs one to three filters; the default mint counts toward neither bound', () => {
    expect(rejected({})).to.match(/at least one/);
    expect(rejected({ gatewayPublicKey: A, recipient: B, trackingId: 't', userPublicKey: A })).to.match(/at most three/);
    expect(resolve({ gatewayPublicKey: A, recipient: B, trackingId: 't' })).to.include({ tokenMint: DEFAULT, defaultMint: true });
  });

  it('walletPublicKey needs an explicit tokenMint, and means PDA("user_payment", wallet, mint)', () => {
    expect(rejected({ walletPublicKey: A })).to.match(/requires tokenMint/);
    expect(resolve({ walletPublicKey: A, tokenMint: MINT }).userPayments).to.deep.equal([pda.userPayment(A, MINT)]);
  });

  it('userPublicKey: the owner on /v1/subscriptions, the user payment elsewhere', () => {
    expect(resolve({ userPublicKey: A }, 'subscriptions')).to.include({ owner: A, subscriptionsOnly: true });
    expect(resolve({ userPublicKey: A }, 'subscriptions').userPayments).to.deep.equal([]);
    expect(resolve({ userPublicKey: A }, 'composable-policies').userPayments).to.deep.equal([A]);
  });

  it('trackingId: 64-byte memo, 32 on composable policies', () => {
    expect(resolve({ trackingId: 'x'.repeat(64) }).memo).to.have.length(64);
    expect(resolve({ trackingId: 'x'.repeat(32) }, 'composable-policies').memo).to.have.length(32);
    expect(rejected({ trackingId: 'x'.repeat(33) }, 'composable-policies')).to.match(/1 to 32/);
    expect(rejected({ trackingId: 'x'.repeat(65) })).to.match(/1 to 64/);
  });

  it('keys must be 32-byte base58', () => {
    expect(rejected({ recipient: 'z'.repeat(44) })).to.match(/recipient/);
    expect(rejected({ gatewayPublicKey: A, tokenMint: 'abc' })).to.match(/tokenMint/);
  });
});
