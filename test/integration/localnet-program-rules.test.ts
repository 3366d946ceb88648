/**
 * The localnet is no more permissive than the Tributary program: the emergency pause on
 * every instruction the program gates with it, and the gateway rules (creation defaults,
 * feature flags). Each rule names the program source it comes from; every instruction
 * travels the localnet's JSON-RPC and is refused with the program's own error.
 */
import { expect } from 'chai';
import { Keypair, PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { fixedText, status } from '../../infra/localnet/program/model.js';
import {
  createComposableIx, createPolicyIxs, programAccount, setPause, startRulesNet, subscription, USDC, type RulesNet,
} from '../support/localnet-program-rpc.js';

describe('localnet program rules: emergency pause and gateways', function () {
  this.timeout(60_000);
  let net: RulesNet;
  before(async () => { net = await startRulesNet('program-rules-pause'); });
  after(async () => { await net.close(); });

  const config = pdas.config();

  /** admin creates a gateway for `authority`; flags, shares and fee recipient as given */
  const createGateway = (authority: PublicKey, o: { flags?: number; schedulerBps?: number; feeRecipient?: PublicKey } = {}): TransactionInstruction =>
    tributaryIx('create_payment_gateway', {
      admin: net.actors.admin.publicKey, authority, gateway: pdas.gateway(authority), config,
      fee_recipient: o.feeRecipient ?? net.actors.merchants[1]!.publicKey,
    }, {
      gateway_fee_bps: 100, scheduler_share_bps: o.schedulerBps ?? 0, name: fixedText('Rules', 32), url: fixedText('https://rules.test', 64),
      initial_feature_flags: o.flags ?? 0,
    });
  const gatewayAccounts = (authority: PublicKey): { authority: PublicKey; gateway: PublicKey; config: PublicKey } =>
    ({ authority, gateway: pdas.gateway(authority), config });

  // programs/tributary/src/instructions/payment/change_payment_policy_status.rs, payment/delete_payment_policy.rs,
  // user/delete_user_payment.rs, gateway/delete_payment_gateway.rs, gateway/change_gateway_fee_bps.rs,
  // gateway/change_gateway_fee_recipient.rs, gateway/change_gateway_signer.rs, composable/change_composable_status.rs,
  // composable/delete_composable_policy.rs: each has `constraint = !config.emergency_pause @ ProgramPaused` on its config
  it('refuses with ProgramPaused each instruction the program gates on the pause, and takes each once it is lifted', async () => {
    const [owner, idle, authority] = [net.actors.spare[0]!, net.actors.users[0]!, net.actors.spare[1]!];
    const merchant = net.actors.merchants[0]!.publicKey;
    const gateway = net.actors.gateways[1]!.address;
    const sub = createPolicyIxs(net, owner.publicKey, gateway, merchant, subscription(1_000_000));
    expect(await net.send(owner, sub.ixs)).to.deep.include({ ok: true });
    const doomed = createPolicyIxs(net, owner.publicKey, gateway, merchant, subscription(2_000_000));
    expect(await net.send(owner, doomed.ixs)).to.deep.include({ ok: true });
    const active = createComposableIx(net, owner.publicKey, gateway, merchant, subscription(500_000));
    expect(await net.send(owner, [active.ix])).to.deep.include({ ok: true });
    const paused = createComposableIx(net, owner.publicKey, gateway, merchant, subscription(500_000));
    const composableStatus = (c: typeof paused, s: 'Active' | 'Paused'): TransactionInstruction => tributaryIx('change_composable_status', {
      owner: owner.publicKey, user_payment: sub.userPayment, composable_policy: c.policy, gateway, config,
    }, { policy_id: c.policyId, new_status: status(s) });
    expect(await net.send(owner, [paused.ix, composableStatus(paused, 'Paused')])).to.deep.include({ ok: true });
    const idleUp = pdas.userPayment(idle.publicKey, USDC);
    expect(await net.send(idle, [tributaryIx('create_user_payment', {
      owner: idle.publicKey, user_payment: idleUp, token_account: pdas.associatedToken(idle.publicKey, USDC), token_mint: USDC, config, fee_payer: idle.publicKey,
    })])).to.deep.include({ ok: true });
    expect(await net.send(net.actors.admin, [createGateway(authority.publicKey)])).to.deep.include({ ok: true });

    const gated: [string, Keypair, TransactionInstruction][] = [
      ['change_payment_policy_status', owner, tributaryIx('change_payment_policy_status', {
        owner: owner.publicKey, user_payment: sub.userPayment, token_mint: USDC, payment_policy: sub.policy, config,
      }, { policy_id: sub.policyId, new_status: status('Paused') })],
      ['delete_payment_policy', owner, tributaryIx('delete_payment_policy', {
        owner: owner.publicKey, user_payment: sub.userPayment, token_mint: USDC, payment_policy: doomed.policy, config, rent_payer: owner.publicKey,
      }, { policy_id: doomed.policyId })],
      ['delete_user_payment', idle, tributaryIx('delete_user_payment', {
        owner: idle.publicKey, user_payment: idleUp, token_mint: USDC, rent_payer: idle.publicKey, config,
      })],
      ['change_composable_status', owner, composableStatus(active, 'Paused')],
      ['delete_composable_policy', owner, tributaryIx('delete_composable_policy', {
        owner: owner.publicKey, user_payment: sub.userPayment, composable_policy: paused.policy, config, rent_payer: owner.publicKey,
      }, { policy_id: paused.policyId })],
      ['change_gateway_fee_bps', authority, tributaryIx('change_gateway_fee_bps', gatewayAccounts(authority.publicKey), { new_fee_bps: 300 })],
      ['change_gateway_fee_recipient', authority, tributaryIx('change_gateway_fee_recipient', {
        ...gatewayAccounts(authority.publicKey), new_fee_recipient: net.actors.merchants[2]!.publicKey,
      })],
      ['change_gateway_signer', authority, tributaryIx('change_gateway_signer', {
        ...gatewayAccounts(authority.publicKey), new_signer: Keypair.generate().publicKey,
      })],
      ['delete_payment_gateway', net.actors.admin, tributaryIx('delete_payment_gateway', {
        admin: net.actors.admin.publicKey, authority: authority.publicKey, gateway: pdas.gateway(authority.publicKey), config,
      })],
    ];

    expect(await setPause(net, true)).to.deep.include({ ok: true });
    const refused: Record<string, string | undefined> = {};
    for (const [name, payer, ix] of gated) refused[name] = (await net.send(payer, [ix])).error;
    expect(refused).to.deep.equal(Object.fromEntries(gated.map(([name]) => [name, 'ProgramPaused'])));
    // update_gateway_feature_flags has no config account: the pause does not reach it
    const flags = tributaryIx('update_gateway_feature_flags', { gateway: pdas.gateway(authority.publicKey), authority: authority.publicKey }, { args: { feature_flags: 0x02 } });
    expect(await net.send(authority, [flags])).to.deep.include({ ok: true });

    expect(await setPause(net, false)).to.deep.include({ ok: true });
    const landed: Record<string, boolean> = {};
    for (const [name, payer, ix] of gated) landed[name] = (await net.send(payer, [ix])).ok;
    expect(landed).to.deep.equal(Object.fromEntries(gated.map(([name]) => [name, true])));
    expect(programAccount(net, doomed.policy, 'PaymentPolicy')).to.equal(undefined);
    expect(programAccount(net, pdas.gateway(authority.publicKey), 'PaymentGateway')).to.equal(undefined);
  });

  // programs/tributary/src/instructions/gateway/update_gateway_feature_flags.rs: flags ≤ 0x0F (InvalidFeatureFlags);
  // referral (0x01) and net amount (0x02) come from the argument, custom protocol fee (0x04) and permissionless (0x08) are kept
  it('update_gateway_feature_flags sets 0x01 and 0x02, keeps 0x04 and 0x08, and refuses values above 0x0F', async () => {
    const authority = Keypair.generate();
    const admin = net.actors.admin;
    expect(await net.send(admin, [createGateway(authority.publicKey, { flags: 0x08 })])).to.deep.include({ ok: true });
    const protocolFee = tributaryIx('update_gateway_protocol_fee', {
      admin: admin.publicKey, authority: authority.publicKey, gateway: pdas.gateway(authority.publicKey), config,
    }, { args: { use_custom_protocol_fee: true, custom_protocol_share_bps: 1_000 } });
    expect(await net.send(admin, [protocolFee])).to.deep.include({ ok: true });
    const stored = (): number | undefined => programAccount(net, pdas.gateway(authority.publicKey), 'PaymentGateway')?.feature_flags;
    expect(stored()).to.equal(0x0c);
    const update = (f: number): TransactionInstruction =>
      tributaryIx('update_gateway_feature_flags', { gateway: pdas.gateway(authority.publicKey), authority: authority.publicKey }, { args: { feature_flags: f } });
    const seen: number[] = [];
    for (const f of [0x01, 0x00, 0x0e, 0x03]) {
      expect(await net.send(admin, [update(f)], [authority])).to.deep.include({ ok: true });
      seen.push(stored() ?? -1);
    }
    expect(seen).to.deep.equal([0x0d, 0x0c, 0x0e, 0x0f]);
    expect(await net.send(admin, [update(0x10)], [authority])).to.deep.include({ ok: false, error: 'InvalidFeatureFlags', code: 6033 });
    expect(stored()).to.equal(0x0f);
  });

  // programs/tributary/src/instructions/gateway/update_gateway_referral_settings.rs: flags masked as update_gateway_feature_flags
  // masks them (0x04 and 0x08 kept), and the tiers validated on every call, so they must always sum to 10000 (InvalidReferralTiers)
  it('update_gateway_referral_settings keeps 0x04 and 0x08 and always wants tiers summing to 100 %', async () => {
    const authority = Keypair.generate();
    const admin = net.actors.admin;
    expect(await net.send(admin, [createGateway(authority.publicKey, { flags: 0x08 })])).to.deep.include({ ok: true });
    const settings = (feature_flags: number | null, tiers: number[] | null): TransactionInstruction => tributaryIx('update_gateway_referral_settings', {
      gateway: pdas.gateway(authority.publicKey), authority: authority.publicKey, config,
    }, { args: { feature_flags, referral_allocation_bps: null, referral_tiers_bps: tiers } });
    expect(await net.send(admin, [settings(0x00, null)], [authority])).to.deep.include({ ok: false, error: 'InvalidReferralTiers', code: 6015 });
    expect(await net.send(admin, [settings(0x03, [6_000, 3_000, 1_000])], [authority])).to.deep.include({ ok: true });
    expect(programAccount(net, pdas.gateway(authority.publicKey), 'PaymentGateway')?.feature_flags).to.equal(0x0b);
    expect(await net.send(admin, [settings(0x00, null)], [authority])).to.deep.include({ ok: true });
    expect(programAccount(net, pdas.gateway(authority.publicKey), 'PaymentGateway')?.feature_flags).to.equal(0x08);
  });

  // programs/tributary/src/instructions/gateway/create_payment_gateway.rs: fee_recipient != default (InvalidAmount),
  // initial_feature_flags ≤ 0x0F (InvalidFeatureFlags), signer = authority, and the share check with the effective
  // protocol share (state/payment_gateway.rs validate_share_constraint: the custom share, 0 at creation, when 0x04 is set)
  it('create_payment_gateway refuses a default fee recipient and unknown flags, starts the signer at the authority, checks shares', async () => {
    const admin = net.actors.admin;
    const a = Keypair.generate().publicKey;
    expect(await net.send(admin, [createGateway(a, { feeRecipient: PublicKey.default })])).to.deep.include({ ok: false, error: 'InvalidAmount' });
    expect(await net.send(admin, [createGateway(a, { flags: 0x10 })])).to.deep.include({ ok: false, error: 'InvalidFeatureFlags' });
    expect(await net.send(admin, [createGateway(a, { schedulerBps: 9_000 })])).to.deep.include({ ok: false, error: 'CombinedFeeBpsExceedsMax' });
    expect(await net.send(admin, [createGateway(a, { flags: 0x0f, schedulerBps: 9_000 })])).to.deep.include({ ok: true });
    const g = programAccount(net, pdas.gateway(a), 'PaymentGateway');
    expect({ signer: g?.signer.toBase58(), flags: g?.feature_flags, scheduler: g?.scheduler_share_bps, custom: g?.custom_protocol_share_bps })
      .to.deep.equal({ signer: a.toBase58(), flags: 0x0f, scheduler: 9_000, custom: 0 });
    // a stranger is not the config's admin: a raw constraint on the config
    const stranger = net.actors.spare[1]!;
    const foreign = tributaryIx('create_payment_gateway', {
      admin: stranger.publicKey, authority: Keypair.generate().publicKey, gateway: pdas.gateway(Keypair.generate().publicKey), config, fee_recipient: a,
    }, { gateway_fee_bps: 100, scheduler_share_bps: 0, name: fixedText('x', 32), url: fixedText('x', 64), initial_feature_flags: 0 });
    expect((await net.send(stranger, [foreign])).ok).to.equal(false);
  });

  // programs/tributary/src/instructions/gateway/change_gateway_signer.rs and change_gateway_fee_recipient.rs:
  // `new_signer` / `new_fee_recipient` != Pubkey::default() @ InvalidAmount
  it('refuses the default key as a gateway signer or fee recipient', async () => {
    const authority = Keypair.generate();
    expect(await net.send(net.actors.admin, [createGateway(authority.publicKey)])).to.deep.include({ ok: true });
    const payer = net.actors.admin;
    const signer = tributaryIx('change_gateway_signer', { ...gatewayAccounts(authority.publicKey), new_signer: PublicKey.default });
    const recipient = tributaryIx('change_gateway_fee_recipient', { ...gatewayAccounts(authority.publicKey), new_fee_recipient: PublicKey.default });
    expect(await net.send(payer, [signer], [authority])).to.deep.include({ ok: false, error: 'InvalidAmount' });
    expect(await net.send(payer, [recipient], [authority])).to.deep.include({ ok: false, error: 'InvalidAmount' });
    expect(programAccount(net, pdas.gateway(authority.publicKey), 'PaymentGateway')?.signer.toBase58()).to.equal(authority.publicKey.toBase58());
  });
});
