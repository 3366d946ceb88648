/**
 * The reconciliation's comparison, cause by cause: given what the chain shows and what the
 * ledgers hold, each difference is named once with its policy, amounts and signatures,
 * and what agrees (or is the payer's own transaction) is not a difference. `since` and
 * the CLI's table, as a reader sees them.
 */
import { expect } from 'chai';
import { compare, countByCause, type Observed } from '../../queries/reconciliation/compare.js';
import { withRetries, type TxFacts } from '../../queries/reconciliation/chain.js';
import { RpcResponseError, RpcUnavailableError } from '../../infra/solana/rpc-client.js';
import type { ChainPayment, ServiceRecord } from '../../queries/reconciliation/ledgers.js';
import { parseSince } from '../../queries/reconciliation/routes.js';
import { reconciliationTable } from '../../src/app/cli/reconcile.js';
import { AppError } from '../../src/kernel/http/errors.js';

const SIGNER = 'Signer1111111111111111111111111111111111111';
const PAYER = 'Payer11111111111111111111111111111111111111';

const pay = (signature: string, policy = 'P1', amount = 100n): ChainPayment => ({ policy, signature, amount, recordId: 1, at: 1000, timestamp: 1000 });
const rec = (source: ServiceRecord['source'], status: string, signature: string, policy = 'P1'): ServiceRecord =>
  ({ source, id: `${source}-${signature}`, policy, status, amount: 100n, signature, at: 1000 });
const landed = (feePayer: string, taken = 100n): TxFacts => ({ kind: 'landed', feePayer, slot: 7, taken });

function given(over: Partial<Observed>): Observed {
  return { gateway: 'G', signer: SIGNER, payments: [], records: [], txs: new Map(), usage: [], prepaid: [], policies: [], accounts: new Map(), periodTotals: new Map(), ...over };
}

describe('reconciliation: compare', () => {
  it('records matched by their payments, and payers\' own transactions, are no difference', () => {
    const d = compare(given({
      payments: [pay('a'), pay('b'), pay('first')],
      records: [rec('scheduler', 'executed', 'a'), rec('payg', 'executed', 'b')],
      txs: new Map([['a', landed(SIGNER)], ['b', landed(SIGNER)], ['first', landed(PAYER)]]),
    }));
    expect(d).to.deep.equal([]);
  });

  it('a payment by the service\'s signer no record names is duplicated, with its signature', () => {
    const d = compare(given({ payments: [pay('a'), pay('dup')], records: [rec('payg', 'executed', 'a')], txs: new Map([['a', landed(SIGNER)], ['dup', landed(SIGNER)]]) }));
    expect(d).to.have.length(1);
    expect(d[0]).to.deep.include({ cause: 'duplicated', policy: 'P1', source: 'chain', signatures: ['dup'], chainAmount: '100' });
  });

  it('a charge the service failed (its usage returned) whose transaction landed anyway is duplicated', () => {
    const d = compare(given({ payments: [pay('f')], records: [rec('payg', 'failed', 'f')], txs: new Map([['f', landed(SIGNER)]]) }));
    expect(d.map((x) => [x.cause, x.source, x.signatures])).to.deep.equal([['duplicated', 'payg', ['f']]]);
  });

  it('a sent record is in doubt; a paid one the chain never landed is lost; one landed and not indexed is in doubt', () => {
    const d = compare(given({
      records: [rec('payg', 'sending', 's'), rec('scheduler', 'executed', 'gone'), rec('prepaid', 'paid', 'late'), rec('upto', 'paid', 'bad'), rec('upto', 'sending', 'u')],
      txs: new Map<string, TxFacts>([['late', landed(PAYER)], ['bad', { kind: 'failed', err: '{"InstructionError":[0,{"Custom":6000}]}' }]]),
    }));
    expect(d.map((x) => [x.cause, x.source, x.signatures[0]])).to.deep.equal([
      ['in_doubt', 'payg', 's'], ['lost', 'scheduler', 'gone'], ['in_doubt', 'prepaid', 'late'], ['lost', 'upto', 'bad'], ['in_doubt', 'upto', 'u'],
    ]);
    expect(d[3]!.detail).to.include('Custom');
  });

  it('usage refused by the chain is unbillable with its reason; usage past its bound is lost; a credit overdrawn is lost', () => {
    const d = compare(given({
      usage: [
        { policy: 'P1', kind: 'unbillable', reason: 'PolicyExpired', amount: 30n, requests: 3, oldest: 1 },
        { policy: 'P2', kind: 'unsettled', reason: '', amount: 20n, requests: 2, oldest: 1 },
      ],
      prepaid: [{ policy: 'P3', credit: 100n, drawn: 160n, transaction: 't' }, { policy: 'P4', credit: 100n, drawn: 100n, transaction: null }],
    }));
    expect(d.map((x) => [x.cause, x.policy, x.serviceAmount])).to.deep.equal([['unbillable', 'P1', '30'], ['lost', 'P2', '20'], ['lost', 'P3', '160']]);
    expect(d[0]!.detail).to.include('PolicyExpired');
    expect(countByCause(d)).to.deep.equal({ in_doubt: 0, unbillable: 1, lost: 2, duplicated: 0 });
  });

  it('a policy account ahead of the index (payment_count, current_period_total) is in doubt', () => {
    const d = compare(given({
      policies: [{ address: 'P1', variant: 'PayAsYouGo', indexedPayments: 2, createdSlot: '1' }, { address: 'P2', variant: 'Subscription', indexedPayments: 3, createdSlot: '1' }],
      accounts: new Map([['P1', { address: 'P1', exists: true, paymentCount: 3, period: { start: 50, total: 300n } }], ['P2', { address: 'P2', exists: true, paymentCount: 3 }]]),
      periodTotals: new Map([['P1', 200n]]),
    }));
    expect(d.map((x) => [x.cause, x.policy, x.chainAmount])).to.deep.equal([['in_doubt', 'P1', null], ['in_doubt', 'P1', '300']]);
  });
});

describe('reconciliation: since and the CLI table', () => {
  const NOW = Date.UTC(2026, 11, 1);

  it('since: ISO 8601 or unix seconds, 30 days back by default; not a time or in the future is invalid input', () => {
    expect(parseSince(undefined, NOW)).to.equal(NOW / 1000 - 30 * 86_400);
    expect(parseSince('2026-11-30T00:00:00Z', NOW)).to.equal(NOW / 1000 - 86_400);
    expect(parseSince(String(NOW / 1000 - 5), NOW)).to.equal(NOW / 1000 - 5);
    for (const bad of ['yesterday', '2026-13-01', String(NOW / 1000 + 60)]) {
      expect(() => parseSince(bad, NOW), bad).to.throw(AppError).with.property('kind', 'invalid_input');
    }
  });

  it('the table: a summary line, then one aligned row per difference with its cause, amounts and signatures', () => {
    const differences = compare(given({ payments: [pay('dupSig', 'PolicyA', 10_000n)], txs: new Map([['dupSig', landed(SIGNER)]]) }));
    const lines = reconciliationTable({ gateways: ['G'], since: 0, ranAt: 0, policies: 1, payments: 1, records: 0, counts: countByCause(differences), differences });
    expect(lines[1]).to.equal('differences: 1 (in_doubt 0, unbillable 0, lost 0, duplicated 1)');
    expect(lines[3]).to.match(/^CAUSE\s+SOURCE\s+POLICY\s+SERVICE\s+CHAIN\s+SIGNATURES\s+DETAIL$/);
    expect(lines[4]).to.match(/^duplicated\s+chain\s+PolicyA\s+-\s+10000\s+dupSig\s+PaymentRecord 1 was signed by the service's signer/);
    expect(lines[3]!.indexOf('CHAIN')).to.equal(lines[4]!.indexOf('10000'));
    expect(reconciliationTable({ gateways: ['G'], since: 0, ranAt: 0, policies: 0, payments: 0, records: 0, counts: countByCause([]), differences: [] })).to.have.length(2);
  });
});

describe('reconciliation: chain reads on an erring node', () => {
  it('a read the node answers with an error or not at all is tried again, four times at most; any other error is not', async () => {
    let calls = 0;
    const flaky = () => { calls += 1; if (calls < 3) throw calls === 1 ? new RpcUnavailableError('timeout', 'getTransaction') : new RpcResponseError(-32005, 'node is behind', 'getTransaction'); return Promise.resolve('ok'); };
    expect(await withRetries(async () => flaky())).to.equal('ok');
    expect(calls).to.equal(3);
    calls = 0;
    const down = () => { calls += 1; return Promise.reject(new RpcResponseError(429, 'rate limited', 'getTransaction')); };
    let err: unknown;
    try { await withRetries(down); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(RpcResponseError);
    expect(calls).to.equal(4);
    calls = 0;
    err = undefined;
    try { await withRetries(() => { calls += 1; return Promise.reject(new TypeError('a bug')); }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(TypeError);
    expect(calls).to.equal(1);
  });
});
