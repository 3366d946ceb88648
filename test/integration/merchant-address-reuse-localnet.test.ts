/**
 * Address reuse for real: on the localnet a payer's subscription is paid, deleted, its user
 * payment deleted and created again (the program restarts its policy count), and policy 1
 * created anew at the other gateway, three times over. The indexer reads the chain into
 * the stream; the merchant model built live, a few events per batch, equals its replay
 * from the archive, counts the last subscription at its own gateway only, and shows no
 * negative MRR.
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { waitFor } from '../support/process.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { startIndexer } from '../../infra/indexer/index.js';
import { createLogger } from '../../infra/log/logger.js';
import { loadConfig } from '../../src/kernel/config/config.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { merchantProjection } from '../../projections/merchant/projection.js';
import { projectionDigest, replayProjection } from '../../projections/replay.js';
import { monthlyMicro } from '../../src/kernel/domain/mrr.js';
import type { TributaryEvent } from '../../src/kernel/events/envelope.js';
import {
  approveOwnIx, createPolicyIxs, executeIx, startRulesNet, subscription, USDC, type RulesNet,
} from '../support/localnet-program-rpc.js';
import { project } from './readmodels-scenario.js';

const cpi = { eventCpi: true } as const;

describe('merchant read model: a policy address reused on the localnet', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let net: RulesNet;
  let ledger: TributaryEvent[];

  before(async () => {
    env = await createTestEnv('merchant_reuse_localnet');
    net = await startRulesNet('merchant-reuse');
  });
  after(async () => { await net?.close(); await env?.close(); });

  it('pays, deletes and recreates policy 1 at alternating gateways, on the program\'s rules', async () => {
    const owner = net.actors.spare[0]!;
    const merchant = net.actors.merchants[0]!.publicKey;
    const [ga, gb] = [net.actors.gateways[0]!, net.actors.gateways[1]!];
    const addresses = new Set<string>();
    for (const [i, [g, amount]] of ([[ga, 1_000_000], [gb, 5_000_000], [ga, 2_000_000]] as const).entries()) {
      const c = createPolicyIxs(net, owner.publicKey, g.address, merchant, subscription(amount));
      expect(c.policyId, 'a recreated user payment restarts its policy count').to.equal(1);
      addresses.add(c.policy.toBase58());
      expect(await net.send(owner, [...c.ixs, approveOwnIx(owner.publicKey, 100_000_000n)]), `create ${i}`).to.deep.include({ ok: true });
      const pay = executeIx(net, { caller: g.signer.publicKey, owner: owner.publicKey, policy: c.policy, gateway: g, recipient: merchant });
      expect(await net.send(g.signer, [pay]), `pay ${i}`).to.deep.include({ ok: true });
      if (i === 2) break;
      const accounts = { owner: owner.publicKey, user_payment: c.userPayment, token_mint: USDC, config: pdas.config(), rent_payer: owner.publicKey };
      expect(await net.send(owner, [tributaryIx('delete_user_payment', accounts, {}, cpi)]), 'a user payment with a policy').to.deep.include({ ok: false, error: 'HasActivePolicies' });
      expect(await net.send(owner, [
        tributaryIx('delete_payment_policy', { ...accounts, payment_policy: c.policy }, { policy_id: 1 }, cpi),
        tributaryIx('delete_user_payment', accounts, {}, cpi),
      ]), `delete ${i}`).to.deep.include({ ok: true });
    }
    expect(addresses.size).to.equal(1);

    const config = loadConfig({ ...env.env, SOLANA_RPC_URL: net.ln.rpcUrl, SOLANA_WS_URL: net.ln.wsUrl, SOLANA_CLUSTER: 'localnet', INDEXER_BACKFILL_INTERVAL_MS: '500' });
    const indexer = await startIndexer({ config, redis: env.redis, logger: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent', 'indexer') });
    ledger = net.ln.ledger();
    try {
      await waitFor(async () => (await env.redis.xlen(env.keys.events)) >= ledger.length, 60_000, 'the indexer to append the ledger');
      await indexer.settled();
    } finally {
      await indexer.stop();
    }
    expect(await env.redis.xlen(env.keys.events)).to.equal(ledger.length);
    const created = ledger.filter((e): e is TributaryEvent<'PaymentPolicyCreated'> => e.name === 'PaymentPolicyCreated');
    expect(created.map((e) => e.data.gateway)).to.deep.equal([ga.address, gb.address, ga.address].map((a) => a.toBase58()));
    expect(ledger.filter((e) => e.name === 'UserPaymentDeleted')).to.have.length(2);
  });

  it('builds the same merchant model live and replayed, the last subscription counted at its gateway only', async () => {
    await project(env, [archiveProjection, merchantProjection], [], 1);
    const live = await projectionDigest(env.db, merchantProjection);
    const last = ledger.filter((e): e is TributaryEvent<'PaymentPolicyCreated'> => e.name === 'PaymentPolicyCreated').at(-1)!;
    const mrr = await env.db.selectFrom('merchant_mrr').selectAll().execute();
    const at = (g: string) => BigInt(mrr.find((r) => r.gateway === g)?.mrr_micro ?? '0');
    expect(at(last.data.gateway)).to.equal(monthlyMicro(last.data.policy_type));
    expect(mrr.filter((r) => r.gateway !== last.data.gateway).every((r) => r.mrr_micro === '0'), JSON.stringify(mrr)).to.equal(true);
    const negative = await sql<{ n: string }>`
      SELECT (SELECT count(*) FROM merchant_mrr WHERE mrr_micro < 0) + (SELECT count(*) FROM merchant_revenue WHERE mrr_micro < 0) AS n`.execute(env.db);
    expect(negative.rows[0]!.n).to.equal('0');
    for (const page of [50_000, 3]) {
      const r = await replayProjection(env.db, merchantProjection, { page, waitMs: 10_000 });
      expect(r.digest, `pages of ${page}`).to.equal(live);
    }
  });
});
