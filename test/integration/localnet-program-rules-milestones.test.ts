/**
 * The localnet releases milestones and returns rent by the Tributary program's rules:
 * milestones sharing a timestamp are each paid by their own execution, release_condition
 * names who may release one (on execute_payment and execute_composable alike), and a
 * closed account's rent goes where the program sends it. Every instruction travels the
 * localnet's JSON-RPC and is refused with the program's own error.
 */
import { expect } from 'chai';
import { Keypair, PublicKey } from '@solana/web3.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { encodeAccount } from '../../infra/localnet/program/encoding.js';
import { statusName, type PaymentPolicy } from '../../infra/localnet/program/model.js';
import {
  approveOwnIx, createComposableIx, createPolicyIxs, executeComposableIx, executeIx, milestone, programAccount, startRulesNet,
  subscription, USDC, type RulesNet,
} from '../support/localnet-program-rpc.js';

describe('localnet program rules: milestones and rent', function () {
  this.timeout(60_000);
  let net: RulesNet;
  let owner: Keypair;
  let recipient: Keypair;
  before(async () => {
    net = await startRulesNet('program-rules-milestones');
    owner = net.actors.spare[0]!;
    recipient = net.actors.merchants[0]!;
    expect(await net.send(owner, [approveOwnIx(owner.publicKey, 10n ** 12n)])).to.deep.include({ ok: true });
  });
  after(async () => { await net.close(); });

  const gateway = (): RulesNet['actors']['gateways'][number] => net.actors.gateways[1]!;
  const past = (): number => Math.floor(Date.now() / 1000) - 3_600;
  const create = async (policyType: object): Promise<PublicKey> => {
    const s = createPolicyIxs(net, owner.publicKey, gateway().address, recipient.publicKey, policyType);
    expect(await net.send(owner, s.ixs)).to.deep.include({ ok: true });
    return s.policy;
  };
  const stored = (policy: PublicKey): PaymentPolicy | undefined => programAccount(net, policy, 'PaymentPolicy');
  const current = (policy: PublicKey): number | undefined => {
    const t = stored(policy)?.policy_type;
    return t && 'Milestone' in t ? t.Milestone.current_milestone : undefined;
  };
  const balanceOf = async (wallet: PublicKey): Promise<bigint> =>
    BigInt((await net.conn.getTokenAccountBalance(pdas.associatedToken(wallet, USDC))).value.amount);
  const release = (policy: PublicKey, caller: Keypair): Promise<{ ok: boolean; error?: string }> =>
    net.send(caller, [executeIx(net, { caller: caller.publicKey, owner: owner.publicKey, policy, gateway: gateway(), recipient: recipient.publicKey })]);

  // programs/tributary/src/shared/schedule.rs: validate_policy_execution gates milestone `current_milestone` on its own
  // timestamp, and advance_policy moves one milestone per execution; nothing merges milestones that share a timestamp
  it('pays milestones with equal timestamps one execution each, then completes', async () => {
    const at = past();
    const policy = await create(milestone([100_000, 200_000, 300_000], [at, at, at + 1], { release: 0x01 }));
    const before = await balanceOf(recipient.publicKey);
    const signer = gateway().signer;
    const steps: (number | undefined)[] = [];
    for (let i = 0; i < 3; i += 1) {
      expect(await release(policy, signer), `milestone ${i}`).to.deep.include({ ok: true });
      steps.push(current(policy));
    }
    expect(steps).to.deep.equal([1, 2, 3]);
    expect(statusName(stored(policy)!.status)).to.equal('Completed');
    expect(stored(policy)?.payment_count).to.equal(3);
    // gross mode at 2 % (gateway 1): the recipient got each amount less the fee
    expect((await balanceOf(recipient.publicKey)) - before).to.equal(98_000n + 196_000n + 294_000n);
    expect(await release(policy, signer)).to.deep.include({ ok: false, error: 'PolicyPaused' });
  });

  // programs/tributary/src/shared/schedule.rs validate_policy_execution: bit 0x02 the gateway signer, 0x04 the owner,
  // 0x08 the recipient must call (Unauthorized); instructions/payment/execute_payment.rs then refuses a recipient caller
  // on a policy that is not pay-as-you-go or upto, so a 0x08 milestone cannot be released through execute_payment
  it('lets only the caller release_condition names release a milestone', async () => {
    const at = past();
    const signer = gateway().signer;
    const outcome = async (condition: number, caller: Keypair): Promise<string> => {
      const policy = await create(milestone([1_000], [at], { release: condition }));
      const r = await release(policy, caller);
      return r.ok ? 'released' : (r.error ?? 'refused');
    };
    const table: Record<string, string> = {};
    for (const [condition, callers] of [[0x00, ['signer', 'owner']], [0x02, ['signer', 'owner']], [0x04, ['signer', 'owner']], [0x08, ['signer', 'owner', 'recipient']]] as const) {
      for (const who of callers) {
        const caller = who === 'signer' ? signer : who === 'owner' ? owner : recipient;
        table[`${condition}:${who}`] = await outcome(condition, caller);
      }
    }
    expect(table).to.deep.equal({
      '0:signer': 'released', '0:owner': 'released',
      '2:signer': 'released', '2:owner': 'Unauthorized',
      '4:signer': 'Unauthorized', '4:owner': 'released',
      '8:signer': 'Unauthorized', '8:owner': 'Unauthorized', '8:recipient': 'Unauthorized',
    });
  });

  // programs/tributary/src/instructions/composable/execute_composable.rs passes the same MilestoneSigners
  // (fee_payer, gateway.signer, user_payment.owner, composable_policy.recipient) to validate_policy_execution
  it('holds execute_composable to release_condition too', async () => {
    const at = past();
    const g = gateway();
    const c = createComposableIx(net, owner.publicKey, g.address, recipient.publicKey, milestone([1_000, 2_000], [at, at], { release: 0x04 }));
    expect(await net.send(owner, [c.ix])).to.deep.include({ ok: true });
    const run = (caller: Keypair): ReturnType<RulesNet['send']> =>
      net.send(caller, [executeComposableIx(net, { caller: caller.publicKey, owner: owner.publicKey, policy: c.policy, gateway: g, recipient: recipient.publicKey })]);
    expect(await run(g.signer)).to.deep.include({ ok: false, error: 'Unauthorized', code: 6003 });
    expect(await run(owner)).to.deep.include({ ok: true });
    const t = programAccount(net, c.policy, 'ComposablePolicy')?.policy_type;
    expect(t && 'Milestone' in t ? t.Milestone.current_milestone : undefined).to.equal(1);
  });

  // programs/tributary/src/shared/account_close.rs resolve_rent_destination: a stored rent_payer of Pubkey::default()
  // (accounts older than the field) sends the rent to the owner whatever rent_payer is passed; otherwise the passed
  // rent_payer must be the stored one (InvalidRentPayer), and close_account moves the lamports to it
  it('returns rent to the stored rent payer, or to the owner when none is stored', async () => {
    const stranger = Keypair.generate().publicKey;
    const payer = net.actors.spare[1]!;
    const del = (policy: PublicKey, id: number, rentPayer: PublicKey): ReturnType<typeof tributaryIx> => tributaryIx('delete_payment_policy', {
      owner: owner.publicKey, user_payment: pdas.userPayment(owner.publicKey, USDC), token_mint: USDC, payment_policy: policy, config: pdas.config(), rent_payer: rentPayer,
    }, { policy_id: id });
    const idOf = (policy: PublicKey): number => stored(policy)!.policy_id;

    const modern = await create(subscription(1_000));
    const rent = await net.conn.getBalance(modern);
    expect(await net.send(payer, [del(modern, idOf(modern), stranger)], [owner])).to.deep.include({ ok: false, error: 'InvalidRentPayer', code: 6036 });
    const ownerBefore = await net.conn.getBalance(owner.publicKey);
    expect(await net.send(payer, [del(modern, idOf(modern), owner.publicKey)], [owner])).to.deep.include({ ok: true });
    expect((await net.conn.getBalance(owner.publicKey)) - ownerBefore).to.equal(rent);

    const legacy = await create(subscription(1_000));
    const acc = net.ln.chain.store.get(legacy.toBase58())!;
    net.ln.chain.store.set(legacy.toBase58(), { ...acc, data: encodeAccount('PaymentPolicy', { ...stored(legacy)!, rent_payer: PublicKey.default }) });
    const ownerBeforeLegacy = await net.conn.getBalance(owner.publicKey);
    expect(await net.send(payer, [del(legacy, idOf(legacy), stranger)], [owner])).to.deep.include({ ok: true });
    expect((await net.conn.getBalance(owner.publicKey)) - ownerBeforeLegacy).to.equal(rent);
    expect(await net.conn.getBalance(stranger)).to.equal(0);
  });
});
