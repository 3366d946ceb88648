/**
 * The merchant model's fees in net and gross mode, against the localnet's execute_payment
 * (which implements both): three gateways, one left in gross mode, one switched to net
 * mode (update_gateway_feature_flags, no event), one in net mode with a custom protocol
 * share (update_gateway_protocol_fee, no event). What the model says each gateway's
 * payers paid (gross), its recipients received (net), its fee account and the protocol
 * got must equal the token balances the chain moved, payment by payment summed; and the
 * direct sum over the archive agrees, before and after a replay.
 */
import { expect } from 'chai';
import { Keypair, type PublicKey } from '@solana/web3.js';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { archiveProjection } from '../../projections/archive/projection.js';
import { merchantProjection } from '../../projections/merchant/projection.js';
import { replayProjection } from '../../projections/replay.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { bn, zeros } from '../../infra/localnet/program/model.js';
import { approveIx } from '../../src/kernel/domain/spl-token.js';
import { archiveRevenue } from '../support/merchant-archive.js';
import { createPolicyIxs, executeIx, startTestChain, USDC, type TestChain } from '../support/localnet-chain.js';
import { project } from './readmodels-scenario.js';

const subscription = (amount: bigint): object => ({
  Subscription: { amount: bn(amount), auto_renew: true, max_renewals: null, payment_frequency: { Custom: { 0: bn(60) } }, next_payment_due: bn(0), padding: zeros(97) },
});

interface Moved { gross: bigint; net: bigint; gatewayFee: bigint; protocolFee: bigint }

describe('merchant fees in net and gross mode, from the localnet', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let tc: TestChain;
  const moved = new Map<string, Moved>();

  before(async () => {
    env = await createTestEnv('merchant_fee_modes');
    tc = startTestChain('merchant-fee-modes', 1_900_000_000);
    const admin = tc.actors.admin;
    const [gross, net, custom] = [tc.actors.gateways[0]!, tc.actors.gateways[1]!, tc.actors.gateways[2]!];
    const flags = (g: typeof gross, f: number) => tributaryIx('update_gateway_feature_flags', { gateway: g.address, authority: g.authority.publicKey }, { args: { feature_flags: f } });
    expect(tc.land(net.authority, [flags(net, 0x02)]).ok).to.equal(true);
    expect(tc.land(custom.authority, [flags(custom, 0x02)]).ok).to.equal(true);
    const share = tc.land(admin, [tributaryIx('update_gateway_protocol_fee', { admin: admin.publicKey, authority: custom.authority.publicKey, gateway: custom.address, config: pdas.config() },
      { args: { use_custom_protocol_fee: true, custom_protocol_share_bps: 3_500 } })], [custom.authority]);
    expect(share.ok, share.logs.join('\n')).to.equal(true);

    const merchant = tc.actors.spare[1]!.publicKey;
    const payers = [tc.actors.spare[0]!, tc.actors.users[0]!, tc.actors.users[1]!].map((k) => Keypair.fromSecretKey(k.secretKey));
    const ata = (owner: PublicKey) => pdas.associatedToken(owner, USDC).toBase58();
    for (const p of payers) expect(tc.land(p, [approveIx(ata(p.publicKey), pdas.userPayment(p.publicKey, USDC).toBase58(), p.publicKey.toBase58(), 10n ** 12n)]).ok).to.equal(true);
    const gateways = [gross, net, custom];
    // odd amounts, so that every floor rounds
    const amounts = [1_000_003n, 7_777_777n, 123_456_789n];
    for (const [gi, g] of gateways.entries()) {
      const m: Moved = { gross: 0n, net: 0n, gatewayFee: 0n, protocolFee: 0n };
      moved.set(g.address.toBase58(), m);
      for (const [pi, payer] of payers.entries()) {
        const s = createPolicyIxs(tc, payer.publicKey, g.address, merchant, subscription(amounts[(gi + pi) % amounts.length]!));
        expect(tc.land(payer, s.ixs).ok).to.equal(true);
        for (let round = 0; round < 2; round += 1) {
          const watched = [payer.publicKey, merchant, g.feeRecipient.publicKey, admin.publicKey];
          const before = watched.map((k) => tc.balance(k));
          // the gateway signer executes the first round, the owner the second
          const caller = round === 0 ? g.signer : payer;
          const landed = tc.land(caller, [executeIx(tc, {
            caller: caller.publicKey, policy: s.policy, userPayment: s.userPayment, user: payer.publicKey, gateway: g.address,
            recipient: merchant, gatewayFeeRecipient: g.feeRecipient.publicKey,
          })]);
          expect(landed.ok, landed.logs.join('\n')).to.equal(true);
          const d = watched.map((k, i) => tc.balance(k) - before[i]!);
          m.gross += -d[0]!;
          m.net += d[1]!;
          m.gatewayFee += d[2]!;
          m.protocolFee += d[3]!;
          tc.setTime(tc.now() + 61);
        }
      }
    }
    await project(env, [archiveProjection, merchantProjection], tc.chain.ledger());
  });
  after(async () => { await env?.close(); });

  const modelTotals = async (): Promise<Map<string, Moved>> => {
    const rows = await env.db.selectFrom('merchant_revenue').selectAll().where('bucket', '=', 'month').execute();
    const out = new Map<string, Moved>();
    for (const r of rows) {
      const m = out.get(r.gateway) ?? { gross: 0n, net: 0n, gatewayFee: 0n, protocolFee: 0n };
      out.set(r.gateway, { gross: m.gross + BigInt(r.gross), net: m.net + BigInt(r.net), gatewayFee: m.gatewayFee + BigInt(r.gateway_fee), protocolFee: m.protocolFee + BigInt(r.protocol_fee) });
    }
    return out;
  };

  it('gross, net, gateway and protocol fees equal what the chain moved, in each mode', async () => {
    const model = await modelTotals();
    for (const [gateway, m] of moved) expect(model.get(gateway), gateway).to.deep.equal(m);
    const [gross, net, custom] = [...moved.values()];
    // gross mode: payers paid the amounts; net mode: recipients got them, payers paid more
    expect(gross!.gross).to.equal(gross!.net + gross!.gatewayFee + gross!.protocolFee);
    expect(net!.gross > net!.net).to.equal(true);
    // 35 % of the fee to the protocol instead of the config's 20 %
    const fee = custom!.gatewayFee + custom!.protocolFee;
    expect(Number(custom!.protocolFee) / Number(fee)).to.be.closeTo(0.35, 0.001);
  });

  it('learns each gateway\'s mode from the payments the chain logged', async () => {
    const rows = await env.db.selectFrom('merchant_gateways').select(['gateway', 'net_mode']).execute();
    const mode = new Map(rows.map((r) => [r.gateway, r.net_mode]));
    expect([...moved.keys()].map((g) => mode.get(g))).to.deep.equal([false, true, true]);
  });

  it('the direct sum over the archive agrees, and a replay rebuilds the same', async () => {
    const direct = await archiveRevenue(env.db);
    const ours = new Set(moved.keys());
    const sum = (rows: { gateway: string; bucket: string; gross: string; net: string }[]) => rows.filter((r) => ours.has(r.gateway) && r.bucket === 'month')
      .map((r) => `${r.gateway}:${r.gross}:${r.net}`).sort();
    const model = [...(await modelTotals())].filter(([g]) => ours.has(g)).map(([g, m]) => `${g}:${m.gross}:${m.net}`).sort();
    expect(sum(direct)).to.deep.equal(model);
    await replayProjection(env.db, merchantProjection);
    for (const [gateway, m] of moved) expect((await modelTotals()).get(gateway)).to.deep.equal(m);
  });
});
