/**
 * The normalized policy: every variant in one shape that its published JSON schema
 * accepts, whatever the values (random Anchor-encoded policy types, extremes included),
 * and the memo encoding of tracking ids.
 */
import { expect } from 'chai';
import { Ajv } from 'ajv';
import { makeEvent } from '../support/anchor-events.js';
import { normalizedPolicySchema } from '../../src/kernel/domain/policy-schema.js';
import { camelKeys, factsFromPaymentAccount, normalizePolicy } from '../../src/kernel/domain/policy.js';
import { asPolicyType } from '../../src/kernel/domain/policy-type.js';
import { memoToTrackingId, trackingIdToMemo } from '../../src/kernel/domain/memo.js';

const validate = new Ajv({ strict: false }).compile(normalizedPolicySchema);
const key = 'AU4grQhj3xF9NQ9Yn8xeJDdFBiz9P9xCsvoAfXYNs7qt';

describe('domain: the normalized policy', () => {
  it('every variant, random values included, matches the published schema', () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 300; seed += 1) {
      const e = makeEvent('PaymentPolicyCreated', {}, seed);
      const account = {
        user_payment: key, recipient: key, gateway: key, policy_type: e.data['policy_type'], status: seed % 3 === 0 ? 'Paused' : 'Active',
        memo: e.data['memo'], memo_hex: e.data['memo_hex']!, total_paid: '18446744073709551615', payment_count: 7,
        created_at: '1700000000', updated_at: '1700000100', policy_id: 3,
      };
      const p = normalizePolicy(factsFromPaymentAccount('CyMxieBYKkeSvoLWenXYe7gmHQ1pLDkVVDtc4jHUmg4C', account, { owner: null, tokenMint: null, lastPaymentAt: null, lastPaymentSignature: null }), 'chain');
      expect(validate(p), `${JSON.stringify(validate.errors)} ${JSON.stringify(p.parameters)}`).to.equal(true);
      expect(p.variant).to.equal(asPolicyType(e.data['policy_type']).kind);
      expect(p.trackingId).to.equal(e.data['memo']);
      seen.add(p.variant);
    }
    expect(seen.size).to.equal(5);
  });

  it('a Subscription: camelCase parameters, the frequency\'s name and seconds, the due date', () => {
    const policy_type = { kind: 'Subscription', amount: '5', auto_renew: false, max_renewals: null, payment_frequency: { kind: 'Custom', value: '60' }, next_payment_due: '1700000000' };
    const p = normalizePolicy(factsFromPaymentAccount(key, {
      user_payment: key, recipient: key, gateway: key, policy_type, status: 'Active', memo: 'abc', memo_hex: Buffer.from('abc').toString('hex').padEnd(128, '0'),
      total_paid: '0', payment_count: 0, created_at: '1', updated_at: '2', policy_id: 1,
    }, { owner: key, tokenMint: key, lastPaymentAt: null, lastPaymentSignature: null }), 'chain');
    expect(p.parameters).to.deep.equal({ amount: '5', autoRenew: false, maxRenewals: null, paymentFrequency: 'Custom', frequencySeconds: '60', nextPaymentDue: '1700000000' });
    expect(p).to.include({ nextPaymentDue: 1_700_000_000, createdAt: 1, updatedAt: 2, trackingId: 'abc', composable: null, source: 'chain' });
  });

  it('camelKeys converts nested keys and leaves values alone', () => {
    expect(camelKeys({ instruction_constraint: { program_id: 'x_y', data_checks: [{ expected_bytes: 1 }] } }))
      .to.deep.equal({ instructionConstraint: { dataChecks: [{ expectedBytes: 1 }], programId: 'x_y' } });
    expect(JSON.stringify(camelKeys({ b_c: 1, a: 2 }))).to.equal('{"a":2,"bC":1}');
  });
});

describe('domain: tracking ids and memos', () => {
  it('encodes UTF-8 zero-padded to the memo size, refusing empty and too-long ids', () => {
    expect(trackingIdToMemo('ab', 4)).to.deep.equal(Buffer.from([0x61, 0x62, 0, 0]));
    expect(trackingIdToMemo('é'.repeat(32), 64)).to.have.length(64);
    expect(trackingIdToMemo('é'.repeat(33), 64)).to.equal(undefined);
    expect(trackingIdToMemo('x'.repeat(33), 32)).to.equal(undefined);
    expect(trackingIdToMemo('', 64)).to.equal(undefined);
    expect(memoToTrackingId(trackingIdToMemo('café', 64)!)).to.equal('café');
  });
});
