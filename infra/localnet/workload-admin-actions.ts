/**
 * Workload actions of gateway authorities and the program admin, and the two kinds of
 * transaction the indexer must not turn into events: a failed one whose logs still
 * carry a `Program data:` line, and another program's that logs `Program data:` too.
 */
import { TransactionInstruction } from '@solana/web3.js';
import { OTHER_PROGRAM_ID, PROGRAM_ID } from './constants.js';
import { fundWallet } from './genesis.js';
import { tributaryIx } from './instructions.js';
import { deriveKeypair, pdas } from './keys.js';
import { encodeEvent } from './program/encoding.js';
import { fixedText, status } from './program/model.js';
import type { WlGateway } from './workload-model.js';
import type { Action } from './workload-plan.js';

const cpi = { eventCpi: true } as const;

const gatewayAccounts = (g: WlGateway): { authority: typeof g.address; gateway: typeof g.address; config: typeof g.address } =>
  ({ authority: g.authority.publicKey, gateway: g.address, config: pdas.config() });

/** the published fixture gateways keep their terms, fee recipient and signer: tests and the service rely on them */
const mutable = (env: Parameters<Action>[0]): WlGateway[] => env.model.gateways.filter((g) => g.selfDriven);

export const changeFeeBps: Action = (env) => {
  const g = env.prng.pick(mutable(env));
  return {
    label: 'change_gateway_fee_bps', payer: g.authority, signers: [],
    ixs: [tributaryIx('change_gateway_fee_bps', gatewayAccounts(g), { new_fee_bps: env.prng.between(25, 500) }, cpi)],
  };
};

export const changeFeeRecipient: Action = (env) => {
  const g = env.prng.pick(mutable(env));
  env.model.counter += 1;
  const next = deriveKeypair(env.chain.seed, `fee-recipient-${env.model.counter}`).publicKey;
  return {
    label: 'change_gateway_fee_recipient', payer: g.authority, signers: [],
    ixs: [tributaryIx('change_gateway_fee_recipient', { ...gatewayAccounts(g), new_fee_recipient: next }, {}, cpi)],
    after: () => void (g.feeRecipient = next),
  };
};

export const changeSigner: Action = (env) => {
  const g = env.prng.pick(mutable(env));
  env.model.counter += 1;
  const next = deriveKeypair(env.chain.seed, `gateway-signer-${env.model.counter}`);
  return {
    label: 'change_gateway_signer', payer: g.authority, signers: [],
    ixs: [tributaryIx('change_gateway_signer', { ...gatewayAccounts(g), new_signer: next.publicKey }, {}, cpi)],
    after: () => {
      fundWallet(env.chain, next.publicKey);
      g.signer = next;
    },
  };
};

export const createExtraGateway: Action = (env) => {
  const { model } = env;
  if (model.gateways.filter((g) => !g.fixture).length >= 3) return undefined;
  model.counter += 1;
  const authority = deriveKeypair(env.chain.seed, `gateway-extra-${model.counter}`);
  const feeRecipient = deriveKeypair(env.chain.seed, `gateway-extra-fee-${model.counter}`).publicKey;
  const address = pdas.gateway(authority.publicKey);
  const gw: WlGateway = { address, authority, signer: authority, feeRecipient, fixture: false, referral: false, selfDriven: true };
  return {
    label: 'create_payment_gateway', payer: model.admin, signers: [],
    ixs: [tributaryIx('create_payment_gateway', {
      admin: model.admin.publicKey, authority: authority.publicKey, gateway: address, config: pdas.config(), fee_recipient: feeRecipient,
    }, {
      gateway_fee_bps: env.prng.between(50, 300), scheduler_share_bps: 0, name: fixedText(`Gateway ${model.counter}`, 32),
      url: fixedText(`https://gw-${model.counter}.localnet.test`, 64), initial_feature_flags: 0,
    }, cpi)],
    after: () => {
      fundWallet(env.chain, authority.publicKey);
      model.gateways.push(gw);
    },
  };
};

export const deleteExtraGateway: Action = (env) => {
  const { model } = env;
  const used = new Set([...model.policies.values()].map((p) => p.gatewayKey));
  const idle = model.gateways.filter((g) => !g.fixture && !used.has(g.address.toBase58()));
  if (idle.length === 0) return undefined;
  const g = env.prng.pick(idle);
  return {
    label: 'delete_payment_gateway', payer: model.admin, signers: [],
    ixs: [tributaryIx('delete_payment_gateway', {
      admin: model.admin.publicKey, authority: g.authority.publicKey, gateway: g.address, config: pdas.config(),
    }, {}, cpi)],
    after: () => void (model.gateways = model.gateways.filter((x) => x !== g)),
  };
};

export const setEmergencyPause = (paused: boolean): Action => (env) => ({
  label: paused ? 'emergency_pause' : 'emergency_unpause', payer: env.model.admin, signers: [],
  ixs: [tributaryIx('set_emergency_pause', { admin: env.model.admin.publicKey, config: pdas.config() }, { paused }, cpi)],
  after: () => void (env.model.programPaused = paused),
});

export const changeProgramAuthority: Action = (env) => {
  env.model.counter += 1;
  const next = deriveKeypair(env.chain.seed, `admin-${env.model.counter}`);
  return {
    label: 'change_program_authority', payer: env.model.admin, signers: [],
    ixs: [tributaryIx('change_program_authority', { admin: env.model.admin.publicKey, new_admin: next.publicKey, config: pdas.config() }, {}, cpi)],
    after: () => {
      fundWallet(env.chain, next.publicKey);
      env.model.admin = next;
    },
  };
};

/**
 * A transaction that fails in its second instruction after the first logged its event:
 * the logs keep the `Program data:` line, yet nothing happened.
 */
export const failingTransaction: Action = (env) => {
  const active = [...env.model.policies.values()].filter((p) => p.kind === 'payment' && p.status === 'Active');
  if (active.length === 0) {
    const g = env.prng.pick(env.model.gateways);
    return { label: 'failed_fee_bps', payer: g.authority, signers: [], ixs: [tributaryIx('change_gateway_fee_bps', gatewayAccounts(g), { new_fee_bps: 20_000 }, cpi)] };
  }
  const p = env.prng.pick(active);
  const accounts = {
    owner: p.up.owner.publicKey, user_payment: p.up.address, token_mint: p.up.mint, payment_policy: p.address, config: pdas.config(),
  };
  const pause = (): TransactionInstruction => tributaryIx('change_payment_policy_status', accounts, { policy_id: p.policyId, new_status: status('Paused') });
  return { label: 'failed_double_pause', payer: p.up.owner, signers: [], ixs: [pause(), pause()] };
};

/** Another program, mentioning ours, logs a perfectly decodable Tributary event. */
export const noiseTransaction: Action = (env) => {
  const g = env.prng.pick(env.model.gateways);
  const fake = encodeEvent('GatewayFeeBpsChanged', { gateway: g.address, old_fee_bps: 1, new_fee_bps: 9_999 });
  return {
    label: 'other_program', payer: g.authority, signers: [],
    ixs: [new TransactionInstruction({ programId: OTHER_PROGRAM_ID, keys: [{ pubkey: PROGRAM_ID, isSigner: false, isWritable: false }], data: fake })],
  };
};

