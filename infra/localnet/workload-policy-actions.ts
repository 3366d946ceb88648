/** Workload actions of users and schedulers: user payments, payment and composable policies. */
import { PublicKey, type AccountMeta } from '@solana/web3.js';
import { OTHER_PROGRAM_ID, PROGRAM_ID, SYSTEM_PROGRAM_ID, WELL_KNOWN_MINTS } from './constants.js';
import { tributaryIx, computeUnitLimitIx } from './instructions.js';
import { keyString, pdas } from './keys.js';
import { decodeAccount } from './program/encoding.js';
import { bn, status, zeros, type PolicyStatusName } from './program/model.js';
import { randomForward, randomMemo, randomPolicyType } from './workload-policies.js';
import { refreshPolicy, type WlPolicy, type WlUserPayment } from './workload-model.js';
import { approveIx, createAtaIdempotentIx, U64_MAX } from '../../src/kernel/domain/spl-token.js';
import type { Action, Plan, WorkloadEnv } from './workload-plan.js';

/** the workload's users pay in these (wSOL and mSOL too, for variety of decimals) */
const WORKLOAD_MINTS = WELL_KNOWN_MINTS.filter((m) => m.symbol !== 'USDC-dev').map((m) => ({ ...m, key: new PublicKey(m.address) }));

const cpi = { eventCpi: true } as const;

/**
 * About half on the fixture gateways (whose payments the service executes), most of the
 * rest on the workload's own gateway, and a few on extra ones, so that those stay idle
 * enough to be deleted now and then.
 */
function pickGateway(env: WorkloadEnv): WorkloadEnv['model']['gateways'][number] {
  const { prng, model } = env;
  const service = model.gateways.filter((g) => g.fixture && !g.selfDriven);
  const own = model.gateways.filter((g) => g.fixture && g.selfDriven);
  const r = prng.next();
  if (r < 0.45 && service.length > 0) return prng.pick(service);
  if (r < 0.9 && own.length > 0) return prng.pick(own);
  return prng.pick(model.gateways);
}
const prefix = (env: WorkloadEnv): Plan['ixs'] => (env.prng.chance(0.15) ? [computeUnitLimitIx(400_000)] : []);

export const createUserPayment: Action = (env) => {
  const { prng, model, actors } = env;
  const owner = prng.pick(actors.users);
  const m = prng.pick(WORKLOAD_MINTS);
  const mint = m.key;
  const address = pdas.userPayment(owner.publicKey, mint);
  if (model.userPayments.has(address.toBase58()) || env.chain.store.get(address.toBase58())) return undefined;
  const up: WlUserPayment = { address, owner, mint, decimals: m.decimals };
  return {
    label: 'create_user_payment', payer: owner, signers: [],
    ixs: [...prefix(env), tributaryIx('create_user_payment', {
      owner: owner.publicKey, user_payment: address, token_account: pdas.associatedToken(owner.publicKey, mint),
      token_mint: mint, config: pdas.config(), fee_payer: owner.publicKey,
    }, {}, cpi),
    // as the SDK does: the user payment PDA becomes the token account's delegate
    approveIx(pdas.associatedToken(owner.publicKey, mint).toBase58(), address.toBase58(), owner.publicKey.toBase58(), U64_MAX)],
    after: () => void model.userPayments.set(address.toBase58(), up),
  };
};

function counts(env: WorkloadEnv, up: WlUserPayment): { policies: number; composables: number; active: number } | undefined {
  const acc = env.chain.store.get(up.address.toBase58());
  const d = acc ? decodeAccount('UserPayment', acc.data) : undefined;
  return d && { policies: d.created_policies_count, composables: d.created_composable_count, active: d.active_policies_count + d.active_composable_count };
}

function track(env: WorkloadEnv, p: WlPolicy): () => void {
  return () => {
    env.model.policies.set(p.address.toBase58(), p);
    refreshPolicy(env.chain, env.model, p);
  };
}

/**
 * A new policy of a random user payment, on a gateway pickGateway chooses, at the address
 * the program derives from the user payment's count of that kind; undefined when the user
 * payment's account is gone.
 */
function newPolicy(env: WorkloadEnv, kind: WlPolicy['kind']): WlPolicy | undefined {
  const { prng, model } = env;
  const up = prng.pick([...model.userPayments.values()]);
  const c = counts(env, up);
  if (!c) return undefined;
  const gateway = pickGateway(env);
  const policyId = (kind === 'payment' ? c.policies : c.composables) + 1;
  const address = kind === 'payment' ? pdas.paymentPolicy(up.address, policyId) : pdas.composablePolicy(up.address, policyId);
  const recipient = prng.pick(env.merchants).publicKey;
  model.counter += 1;
  return {
    kind, address, up, policyId, gateway: gateway.address, gatewayKey: gateway.address.toBase58(), recipient, variant: 'Subscription', status: 'Active', due: null,
  };
}

export const createPaymentPolicy: Action = (env) => {
  const { prng, model } = env;
  const p = newPolicy(env, 'payment');
  if (!p) return undefined;
  const { up, address, recipient, gateway } = p;
  return {
    label: 'create_payment_policy', payer: up.owner, signers: [],
    ixs: [...prefix(env), tributaryIx('create_payment_policy', {
      user: up.owner.publicKey, user_payment: up.address, recipient, token_mint: up.mint, gateway,
      config: pdas.config(), payment_policy: address, fee_payer: up.owner.publicKey,
    }, { policy_type: randomPolicyType(prng, model.scheduleNow, up.decimals), memo: randomMemo(prng, model.counter, 64) }, cpi)],
    after: track(env, p),
  };
};

export const createComposablePolicy: Action = (env) => {
  const { prng, model } = env;
  const p = newPolicy(env, 'composable');
  if (!p) return undefined;
  const { up, address, recipient, gateway } = p;
  const validation = (): object => (prng.chance(0.3) ? { ProgramCall: { program_id: SYSTEM_PROGRAM_ID } } : { Disabled: {} });
  const init = { num_pinned_accounts: 0, pinned_accounts: [0, 1, 2, 3].map(() => ({ index: 0, pubkey: PublicKey.default })), validation_data: Buffer.alloc(0) };
  return {
    label: 'create_composable_policy', payer: up.owner, signers: [],
    ixs: [tributaryIx('create_composable_policy', {
      fee_payer: up.owner.publicKey, user: up.owner.publicKey, recipient, composable_policy: address, user_payment: up.address,
      gateway, config: pdas.config(), pre_validation_pda: PROGRAM_ID, post_validation_pda: PROGRAM_ID,
      pre_validation_program: SYSTEM_PROGRAM_ID, post_validation_program: SYSTEM_PROGRAM_ID, input_mint: up.mint, output_mint: up.mint,
    }, {
      policy_type: randomPolicyType(prng, model.scheduleNow, up.decimals), memo: randomMemo(prng, model.counter, 32),
      forward_config: randomForward(prng, up.mint, SYSTEM_PROGRAM_ID), pre_validation: validation(), pre_init: init,
      post_validation: validation(), post_init: init,
    }, cpi)],
    after: track(env, p),
  };
};

function statusIx(p: WlPolicy, next: PolicyStatusName): Plan['ixs'][number] {
  const owner = p.up.owner.publicKey;
  if (p.kind === 'payment') {
    return tributaryIx('change_payment_policy_status', {
      owner, user_payment: p.up.address, token_mint: p.up.mint, payment_policy: p.address, config: pdas.config(),
    }, { policy_id: p.policyId, new_status: status(next) }, cpi);
  }
  return tributaryIx('change_composable_status', {
    owner, user_payment: p.up.address, composable_policy: p.address, gateway: p.gateway, config: pdas.config(),
  }, { policy_id: p.policyId, new_status: status(next) }, cpi);
}

const withStatus = (env: WorkloadEnv, s: PolicyStatusName): WlPolicy[] => [...env.model.policies.values()].filter((p) => p.status === s);

function toggle(from: PolicyStatusName, to: PolicyStatusName): Action {
  return (env) => {
    const candidates = withStatus(env, from);
    if (candidates.length === 0) return undefined;
    const first = env.prng.pick(candidates);
    // sometimes two changes in one transaction, to exercise events of several instructions
    const second = env.prng.chance(0.15) ? candidates.find((p) => p !== first) : undefined;
    const picked = second ? [first, second] : [first];
    return {
      label: `status_${to}`, payer: first.up.owner, signers: second ? [second.up.owner] : [],
      ixs: [...prefix(env), ...picked.map((p) => statusIx(p, to))],
      after: () => picked.forEach((p) => refreshPolicy(env.chain, env.model, p)),
    };
  };
}

export const pausePolicy = toggle('Active', 'Paused');
export const resumePolicy = toggle('Paused', 'Active');

export const deletePolicy: Action = (env) => {
  // the program deletes a composable policy only once it is no longer Active
  const all = [...env.model.policies.values()].filter((p) => p.kind === 'payment' || p.status !== 'Active');
  if (all.length === 0) return undefined;
  const p = env.prng.pick(all);
  const owner = p.up.owner.publicKey;
  const ix = p.kind === 'payment'
    ? tributaryIx('delete_payment_policy', {
      owner, user_payment: p.up.address, token_mint: p.up.mint, payment_policy: p.address, config: pdas.config(), rent_payer: owner,
    }, { policy_id: p.policyId }, cpi)
    : tributaryIx('delete_composable_policy', {
      owner, user_payment: p.up.address, composable_policy: p.address, config: pdas.config(), rent_payer: owner,
    }, { policy_id: p.policyId }, cpi);
  return { label: `delete_${p.kind}`, payer: p.up.owner, signers: [], ixs: [ix], after: () => refreshPolicy(env.chain, env.model, p) };
};

export const deleteUserPayment: Action = (env) => {
  const idle = [...env.model.userPayments.values()].filter((up) => counts(env, up)?.active === 0);
  if (idle.length === 0) return undefined;
  const up = env.prng.pick(idle);
  const owner = up.owner.publicKey;
  return {
    label: 'delete_user_payment', payer: up.owner, signers: [],
    ixs: [tributaryIx('delete_user_payment', {
      owner, user_payment: up.address, token_mint: up.mint, rent_payer: owner, config: pdas.config(),
    }, {}, cpi)],
    after: () => void env.model.userPayments.delete(up.address.toBase58()),
  };
};

/** Charges a due policy as its gateway's scheduler would. */
export function executeDue(env: WorkloadEnv, p: WlPolicy): Plan | undefined {
  const { prng, model } = env;
  const gateway = model.gateways.find((g) => g.address.equals(p.gateway));
  const acc = env.chain.store.get(p.address.toBase58());
  if (!gateway || !acc) return undefined;
  const decoded = p.kind === 'payment' ? decodeAccount('PaymentPolicy', acc.data) : decodeAccount('ComposablePolicy', acc.data);
  if (!decoded) return undefined;
  const t = decoded.policy_type;
  const amount = 'PayAsYouGo' in t
    ? bn(1 + prng.int(Math.max(1, Math.floor(t.PayAsYouGo.max_chunk_amount.toNumber() / 4))))
    : 'UpTo' in t ? t.UpTo.max_amount.divn(2).addn(1) : null;
  const ata = (owner: PublicKey): PublicKey => pdas.associatedToken(owner, p.up.mint);
  const configAcc = env.chain.store.get(pdas.config().toBase58());
  const protocolFeeRecipient = (configAcc && decodeAccount('ProgramConfig', configAcc.data)?.fee_recipient) ?? env.actors.admin.publicKey;
  const common = {
    fee_payer: gateway.signer.publicKey, payments_delegate: pdas.paymentsDelegate(), user_payment: p.up.address,
    gateway: gateway.address, config: pdas.config(), user_token_account: ata(p.up.owner.publicKey), mint: p.up.mint,
    recipient_token_account: ata(p.recipient), gateway_fee_account: ata(gateway.feeRecipient),
    protocol_fee_account: ata(protocolFeeRecipient),
  };
  // the fee recipients change now and then: their token accounts are created as the SDK does, idempotently
  const atas = p.kind === 'payment'
    ? [p.recipient, gateway.feeRecipient, protocolFeeRecipient]
      .filter((w) => !env.chain.store.get(keyString(ata(w))))
      .map((w) => createAtaIdempotentIx(gateway.signer.publicKey.toBase58(), w.toBase58(), p.up.mint.toBase58()))
    : [];
  const referrers: AccountMeta[] = gateway.referral && prng.chance(0.5)
    ? env.actors.referrers.slice(0, prng.between(1, 3)).map((k) => ({ pubkey: k.publicKey, isSigner: false, isWritable: true }))
    : [];
  // now and then the program CPIs into a program that logs `Program data:` of its own
  const extra = prng.chance(0.03) ? [OTHER_PROGRAM_ID] : [];
  const ix = p.kind === 'payment'
    ? tributaryIx('execute_payment', { ...common, payment_policy: p.address }, { payment_amount: amount }, { remaining: referrers, extra, eventCpi: true })
    : tributaryIx('execute_composable', {
      ...common, composable_policy: p.address, pre_validation_program: SYSTEM_PROGRAM_ID, post_validation_program: SYSTEM_PROGRAM_ID,
      pre_validation_pda: PROGRAM_ID, post_validation_pda: PROGRAM_ID, output_mint: p.up.mint,
      intermediate_input_token_account: ata(pdas.paymentsDelegate()), intermediate_output_token_account: ata(pdas.paymentsDelegate()),
    }, { instruction_data: Buffer.from(zeros(prng.between(8, 16)).map(() => prng.int(256))), forward_amount: amount }, { extra, eventCpi: true });
  return { label: `execute_${p.kind}`, payer: gateway.signer, signers: [], ixs: [...prefix(env), ...atas, ix], after: () => refreshPolicy(env.chain, model, p) };
}
