/**
 * Against the localnet's workload, end to end: the indexer reads the localnet's chain into
 * the stream, the runner folds it into the read models, and every answer is compared with
 * the localnet's own account state, snapshotted with its ledger (`tributary_getLedger`'s
 * content) while the workload is paused, so both describe one moment. Chain reads
 * (/{address}) are compared with getAccountInfo made around them.
 *
 * Documented differences: a PayAsYouGo's current period (start, total) and a paid
 * Subscription's next due date are advanced by the workload's accelerated schedule clock,
 * which no event carries (a payment's timestamp is its block time, as Clock::unix_timestamp
 * is); the read model advances them by the payments' own timestamps (as on a real
 * cluster), so those parameters are left out of the comparison.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers are compared field by field */
import { expect } from 'chai';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { startTestApi, type TestApi } from '../support/app.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import { PROJECTIONS } from '../../projections/registry.js';
import { paymentStats } from '../../projections/stats/query.js';
import { idlAccounts, PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { decodeAccount, type EventData } from '../../src/kernel/events/codec.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import {
  factsFromComposableAccount, factsFromPaymentAccount, normalizePolicy, type AccountExtras, type NormalizedPolicy,
} from '../../src/kernel/domain/policy.js';
import { waitFor } from '../support/process.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { startIndexer } from '../../infra/indexer/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { key, project } from './readmodels-scenario.js';

interface Snapshot { ledger: TributaryEvent[]; accounts: Map<string, { name: string; data: EventData }> }

const discriminators = idlAccounts.map((a) => ({ name: a.name, disc: Buffer.from(a.discriminator) }));

/** The ledger and every program account, read in one synchronous step (no workload tick between). */
function snapshot(ln: Localnet): Snapshot {
  const ledger = ln.ledger();
  const accounts = new Map<string, { name: string; data: EventData }>();
  for (const [address, acc] of ln.chain.store.entries()) {
    if (acc.owner !== PROGRAM_ID) continue;
    const name = discriminators.find((d) => acc.data.subarray(0, 8).equals(d.disc))?.name;
    if (name) accounts.set(address, { name, data: decodeAccount(name, Buffer.from(acc.data)) });
  }
  return { ledger, accounts };
}

/** What both sources know: the read model adds the last payment, the chain read says where it came from. */
function comparable(p: NormalizedPolicy | Record<string, any>): Record<string, unknown> {
  const { source: _s, chainUnavailable: _c, lastPaymentAt: _l, lastPaymentSignature: _ls, ...rest } = p as NormalizedPolicy;
  const parameters = { ...rest.parameters };
  if (rest.variant === 'PayAsYouGo') { delete parameters['currentPeriodStart']; delete parameters['currentPeriodTotal']; }
  if (rest.variant === 'Subscription' && rest.paymentCount > 0) {
    delete parameters['nextPaymentDue'];
    return { ...rest, parameters, nextPaymentDue: 'advanced by the schedule clock' };
  }
  return { ...rest, parameters };
}

describe('policy API against the localnet workload', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let ln: Localnet;
  let api: TestApi;
  let snap: Snapshot;
  const of = (name: string) => [...snap.accounts].filter(([, a]) => a.name === name);

  const get = async (path: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${api.url}${path}`);
    return { status: res.status, body: await res.json() };
  };
  const extras = (userPayment: string): AccountExtras => {
    const up = snap.accounts.get(userPayment)?.data;
    return { owner: (up?.['owner'] as string) ?? null, tokenMint: (up?.['token_mint'] as string) ?? null, lastPaymentAt: null, lastPaymentSignature: null };
  };
  const chainPolicy = (address: string): NormalizedPolicy => {
    const a = snap.accounts.get(address)!;
    const facts = a.name === 'PaymentPolicy'
      ? factsFromPaymentAccount(address, a.data, extras(a.data['user_payment'] as string))
      : factsFromComposableAccount(address, a.data, extras(a.data['user_payment'] as string));
    return normalizePolicy(facts, 'chain');
  };

  before(async () => {
    env = await createTestEnv('policies-localnet');
    ln = await startLocalnet({ port: 0, seed: 'policies-localnet', rate: 400 });
    const config = loadConfig({ ...env.env, SOLANA_RPC_URL: ln.rpcUrl, SOLANA_WS_URL: ln.wsUrl, SOLANA_CLUSTER: 'localnet', INDEXER_BACKFILL_INTERVAL_MS: '1000' });
    const indexer = await startIndexer({ config, redis: env.redis, logger: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'indexer') });
    try {
      await waitFor(async () => {
        const names = new Set<string>(ln.ledger().map((e) => e.name));
        const kinds = new Set(ln.ledger().filter((e) => e.name === 'PaymentPolicyCreated').map((e) => (e.data['policy_type'] as { kind: string }).kind));
        return kinds.size === 5 && ['PaymentRecord', 'ComposableExecuted', 'PaymentPolicyDeleted', 'PaymentPolicyStatusChanged'].every((n) => names.has(n)) && ln.ledger().length > 1500;
      }, 60_000, 'a workload with every kind of policy');
      // the workload runs in this process: pausing it freezes the chain, so the ledger and
      // the accounts below describe one moment, and leaves the CPU to the indexer and projectors
      ln.workload.tick = () => undefined;
      snap = snapshot(ln);
      await indexer.settled();
    } finally {
      await indexer.stop();
    }
    expect(await env.redis.xlen(env.keys.events), 'the indexer appended every ledger event once').to.equal(snap.ledger.length);
    const started = Date.now();
    await project(env, PROJECTIONS, [], 500);
    if (process.env['TEST_TIMING']) console.log(`projected ${snap.ledger.length} events in ${Date.now() - started} ms`);
    api = await startTestApi(env, { SOLANA_RPC_URL: ln.rpcUrl, SOLANA_CLUSTER: 'localnet' });
  });
  after(async () => { await api?.close(); await ln?.close(); await env?.close(); });

  it('gateways and user payments equal the program accounts', async () => {
    const gateways = await env.db.selectFrom('gateways').selectAll().execute();
    const live = gateways.filter((g) => !g.deleted);
    expect(live.map((g) => g.address).sort()).to.deep.equal(of('PaymentGateway').map(([a]) => a).sort());
    for (const g of live) {
      const d = snap.accounts.get(g.address)!.data;
      expect({ authority: g.authority, fee_recipient: g.fee_recipient, signer: g.signer, fee_bps: g.fee_bps, name: g.name, url: g.url, active: g.active })
        .to.deep.equal({ authority: d['authority'], fee_recipient: d['fee_recipient'], signer: d['signer'], fee_bps: d['gateway_fee_bps'], name: d['name'], url: d['url'], active: d['is_active'] });
    }
    const ups = (await env.db.selectFrom('user_payments').selectAll().execute()).filter((u) => u.active);
    expect(ups.map((u) => u.address).sort()).to.deep.equal(of('UserPayment').map(([a]) => a).sort());
    for (const u of ups) {
      const d = snap.accounts.get(u.address)!.data;
      expect([u.owner, u.token_mint, u.token_account]).to.deep.equal([d['owner'], d['token_mint'], d['token_account']]);
    }
  });

  it('the lists hold exactly the program\'s policies, equal field by field', async () => {
    const gateways = [...new Set([...snap.accounts.values()].filter((a) => a.name === 'PaymentPolicy' || a.name === 'ComposablePolicy').map((a) => a.data['gateway'] as string))];
    const mints = ln.fixtures.mints.map((m) => m.address);
    for (const [endpoint, account] of [['payment-policies', 'PaymentPolicy'], ['composable-policies', 'ComposablePolicy'], ['subscriptions', 'PaymentPolicy']] as const) {
      const seen: string[] = [];
      for (const g of gateways) {
        for (const m of mints) {
          const { status, body } = await get(`/v1/${endpoint}?gatewayPublicKey=${g}&tokenMint=${m}&limit=1000`);
          expect(status).to.equal(200);
          const expected = of(account)
            .filter(([, a]) => a.data['gateway'] === g && extras(a.data['user_payment'] as string).tokenMint === m)
            .filter(([, a]) => endpoint !== 'subscriptions' || (a.data['policy_type'] as { kind: string }).kind === 'Subscription')
            .map(([addr]) => addr);
          expect(body.data.map((p: any) => p.address).sort(), `${endpoint} ${g} ${m}`).to.deep.equal(expected.sort());
          for (const p of body.data) expect(comparable(p), p.address).to.deep.equal(comparable(chainPolicy(p.address)));
          seen.push(...expected);
        }
      }
      if (endpoint !== 'subscriptions') expect(seen.length, endpoint).to.equal(of(account).length);
    }
  });

  it('userPublicKey, walletPublicKey and trackingId filters select what the accounts say', async () => {
    const policies = of('PaymentPolicy');
    const sample = policies.filter((_, i) => i % Math.max(1, Math.floor(policies.length / 8)) === 0);
    for (const [address, a] of sample) {
      const up = a.data['user_payment'] as string;
      const { owner, tokenMint } = extras(up);
      const mine = policies.filter(([, b]) => b.data['user_payment'] === up).map(([x]) => x).sort();
      const byUp = await get(`/v1/payment-policies?userPublicKey=${up}&limit=1000&tokenMint=${tokenMint}`);
      expect(byUp.body.data.map((p: any) => p.address).sort()).to.deep.equal(mine);
      const byWallet = await get(`/v1/payment-policies?walletPublicKey=${owner}&tokenMint=${tokenMint}&limit=1000`);
      expect(byWallet.body.data.map((p: any) => p.address).sort()).to.deep.equal(mine);
      const memo = a.data['memo'] as string;
      if (memo !== '') {
        const same = policies.filter(([, b]) => b.data['memo_hex'] === a.data['memo_hex'] && extras(b.data['user_payment'] as string).tokenMint === tokenMint).map(([x]) => x).sort();
        const byMemo = await get(`/v1/payment-policies?trackingId=${encodeURIComponent(memo)}&tokenMint=${tokenMint}&limit=1000`);
        expect(byMemo.body.data.map((p: any) => p.address).sort(), memo).to.deep.equal(same);
      }
      const subs = await get(`/v1/subscriptions?userPublicKey=${owner}&tokenMint=${tokenMint}&limit=1000`);
      const ownerSubs = policies.filter(([, b]) => extras(b.data['user_payment'] as string).owner === owner
        && extras(b.data['user_payment'] as string).tokenMint === tokenMint && (b.data['policy_type'] as { kind: string }).kind === 'Subscription');
      expect(subs.body.data.map((p: any) => p.address).sort()).to.deep.equal(ownerSubs.map(([x]) => x).sort());
      expect(address).to.be.a('string');
    }
  });

  it('executions count what the account counts, newest first', async () => {
    const paid = of('PaymentPolicy').filter(([, a]) => (a.data['payment_count'] as number) > 0).slice(0, 6);
    expect(paid.length).to.be.greaterThan(0);
    for (const [address, a] of paid) {
      const { body } = await get(`/v1/payment-policies/${address}/executions?limit=1000`);
      const ids = body.data.map((e: any) => e.data.record_id);
      expect(ids.length).to.equal(a.data['payment_count']);
      expect(ids).to.deep.equal([...ids].sort((x: number, y: number) => y - x));
      expect(body.data.reduce((s: bigint, e: any) => s + BigInt(e.data.amount), 0n).toString()).to.equal(a.data['total_paid']);
    }
  });

  it('payment stats equal the sum of the ledger\'s PaymentRecords', async () => {
    const records = snap.ledger.filter((e) => e.name === 'PaymentRecord');
    expect(await paymentStats(env.db, {})).to.deep.equal({
      count: records.length, volume: records.reduce((s, e) => s + BigInt(e.data['amount']), 0n).toString(),
    });
  });

  it('/{address} reads the chain: equal to getAccountInfo around it; 404 for no account or another kind', async () => {
    const rpc = createRpcClient({ url: ln.rpcUrl, timeoutMs: 5000 });
    const opts = { programId: PROGRAM_ID };
    for (const [endpoint, account] of [['payment-policies', 'PaymentPolicy'], ['composable-policies', 'ComposablePolicy']] as const) {
      for (const [address] of of(account).slice(0, 6)) {
        const before = await readProgramAccount(rpc, address, account, opts);
        const { status, body } = await get(`/v1/${endpoint}/${address}`);
        const after = await readProgramAccount(rpc, address, account, opts);
        const expected = [before, after].filter((r) => r.kind === 'found').map((r) => {
          const d = (r as { data: EventData }).data;
          const facts = account === 'PaymentPolicy' ? factsFromPaymentAccount(address, d, extras(d['user_payment'] as string)) : factsFromComposableAccount(address, d, extras(d['user_payment'] as string));
          return comparable(normalizePolicy(facts, 'chain'));
        });
        if (status === 404) { expect(before.kind === 'missing' || after.kind === 'missing').to.equal(true); continue; }
        expect(status).to.equal(200);
        expect(body.data.source).to.equal('chain');
        expect(expected.some((e) => JSON.stringify(e) === JSON.stringify(comparable(body.data))), address).to.equal(true);
      }
    }
    expect((await get(`/v1/payment-policies/${key('never-created')}`)).status).to.equal(404);
    const [composable] = of('ComposablePolicy')[0]!;
    const [payment] = of('PaymentPolicy')[0]!;
    const [gateway] = of('PaymentGateway')[0]!;
    expect((await get(`/v1/payment-policies/${composable}`)).status).to.equal(404);
    expect((await get(`/v1/composable-policies/${payment}`)).status).to.equal(404);
    const wrong = await get(`/v1/payment-policies/${gateway}`);
    expect(wrong.status).to.equal(404);
    expect(wrong.body.error).to.match(/not a payment policy/);
    // a deleted policy whose address the workload has not used again (policy ids are reused)
    const deleted = snap.ledger.filter((e) => e.name === 'PaymentPolicyDeleted').map((e) => e.data['payment_policy'])
      .find((a) => !snap.accounts.has(a));
    expect(deleted, 'a deleted policy still closed').to.be.a('string');
    expect((await get(`/v1/payment-policies/${deleted!}`)).status).to.equal(404);
  });

  it('/v1/onetime finds the OneTime policies of a tracking id', async () => {
    const onetime = of('PaymentPolicy').filter(([, a]) => (a.data['policy_type'] as { kind: string }).kind === 'OneTime' && a.data['memo'] !== '');
    for (const [, a] of onetime.slice(0, 4)) {
      const expected = onetime.filter(([, b]) => b.data['memo_hex'] === a.data['memo_hex']).map(([x]) => x).sort();
      const { body } = await get(`/v1/onetime/${encodeURIComponent(a.data['memo'] as string)}?limit=1000`);
      const got = Array.isArray(body.data) ? body.data.map((p: any) => p.address) : [body.data.address];
      expect(got.sort()).to.deep.equal(expected);
    }
  });
});
