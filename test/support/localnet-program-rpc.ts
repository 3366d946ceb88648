/**
 * Sending the program's own instructions to a running localnet over JSON-RPC, for tests
 * of the emulated program's rules: one transaction at a time, each on a fresh blockhash,
 * answering the program error a refused one names (its number and IDL name).
 */
import { Connection, PublicKey, Transaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import BN from 'bn.js';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { deriveActors, type Actors } from '../../infra/localnet/genesis.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { decodeAccount } from '../../infra/localnet/program/encoding.js';
import { bn, zeros, type AccountTypes } from '../../infra/localnet/program/model.js';
import { PROGRAM_ID, SYSTEM_PROGRAM_ID } from '../../infra/localnet/constants.js';
import { programErrorByCode } from '../../src/kernel/domain/program-errors.js';
import { approveIx } from '../../src/kernel/domain/spl-token.js';

export const USDC = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');

/** What the node answered: landed, or refused with the program's error. */
export interface Sent { ok: boolean; code?: number; error?: string; message?: string }

export interface RulesNet {
  ln: Localnet;
  conn: Connection;
  actors: Actors;
  send(payer: Keypair, ixs: TransactionInstruction[], signers?: Keypair[]): Promise<Sent>;
  close(): Promise<void>;
}

export async function startRulesNet(seed: string): Promise<RulesNet> {
  const ln = await startLocalnet({ port: 0, seed, rate: 0 });
  const conn = new Connection(ln.rpcUrl, { commitment: 'confirmed' });
  let lastHash = '';
  const freshBlockhash = async (): Promise<string> => {
    // the same instructions twice must be two transactions: wait for the next slot's hash
    for (;;) {
      const { blockhash } = await conn.getLatestBlockhash();
      if (blockhash !== lastHash) return (lastHash = blockhash);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const send = async (payer: Keypair, ixs: TransactionInstruction[], signers: Keypair[] = []): Promise<Sent> => {
    const tx = new Transaction().add(...ixs);
    tx.recentBlockhash = await freshBlockhash();
    tx.feePayer = payer.publicKey;
    tx.sign(payer, ...signers.filter((s) => !s.publicKey.equals(payer.publicKey)));
    try {
      const sig = await conn.sendRawTransaction(tx.serialize());
      const { value } = await conn.confirmTransaction(sig, 'confirmed');
      return value.err === null ? { ok: true } : { ok: false, message: JSON.stringify(value.err) };
    } catch (err) {
      const message = (err as Error).message;
      const hex = /custom program error: 0x([0-9a-f]+)/.exec(message)?.[1];
      if (hex === undefined) return { ok: false, message };
      const code = parseInt(hex, 16);
      return { ok: false, code, error: programErrorByCode(code)?.name ?? `#${code}`, message };
    }
  };
  return {
    ln, conn, actors: deriveActors(seed), send,
    close: async () => {
      await new Promise((r) => setTimeout(r, 600));
      await ln.close();
    },
  };
}

/** The account as the program stores it, decoded (undefined when closed). */
export function programAccount<K extends 'PaymentPolicy' | 'PaymentGateway' | 'UserPayment' | 'ComposablePolicy'>(
  net: RulesNet, address: PublicKey, kind: K,
): AccountTypes[K] | undefined {
  const acc = net.ln.chain.store.get(address.toBase58());
  return acc ? decodeAccount(kind, acc.data) : undefined;
}

export interface Owned { userPayment: PublicKey; policy: PublicKey; policyId: number }

/** create_user_payment when missing, then create_payment_policy, as the SDK builds them. */
export function createPolicyIxs(
  net: RulesNet, owner: PublicKey, gateway: PublicKey, recipient: PublicKey, policyType: object,
): Owned & { ixs: TransactionInstruction[] } {
  const userPayment = pdas.userPayment(owner, USDC);
  const up = programAccount(net, userPayment, 'UserPayment');
  const ixs: TransactionInstruction[] = [];
  if (!up) {
    ixs.push(tributaryIx('create_user_payment', {
      owner, user_payment: userPayment, token_account: pdas.associatedToken(owner, USDC), token_mint: USDC, config: pdas.config(), fee_payer: owner,
    }));
  }
  const policyId = (up?.created_policies_count ?? 0) + 1;
  const policy = pdas.paymentPolicy(userPayment, policyId);
  ixs.push(tributaryIx('create_payment_policy', {
    user: owner, user_payment: userPayment, recipient, token_mint: USDC, gateway, config: pdas.config(), payment_policy: policy, fee_payer: owner,
  }, { policy_type: policyType, memo: zeros(64) }));
  return { userPayment, policy, policyId, ixs };
}

/** create_composable_policy without forwarding (same mint in and out) or validation, the next id of the owner's user payment. */
export function createComposableIx(
  net: RulesNet, owner: PublicKey, gateway: PublicKey, recipient: PublicKey, policyType: object,
): { policy: PublicKey; policyId: number; ix: TransactionInstruction } {
  const userPayment = pdas.userPayment(owner, USDC);
  const policyId = (programAccount(net, userPayment, 'UserPayment')?.created_composable_count ?? 0) + 1;
  const policy = pdas.composablePolicy(userPayment, policyId);
  const empty = { offset: 0, length: 0, expected: zeros(8) };
  const pin = { index: 0, pubkey: PublicKey.default };
  const forward = {
    instruction_constraint: {
      program_id: PublicKey.default, num_data_checks: 0, data_checks: [empty, empty, empty, empty], num_pinned_accounts: 0, pinned_accounts: [pin, pin, pin, pin],
    },
    input_mint: USDC, output_mint: USDC, forward_flags: 0,
  };
  const init = { num_pinned_accounts: 0, pinned_accounts: [pin, pin, pin, pin], validation_data: Buffer.alloc(0) };
  const ix = tributaryIx('create_composable_policy', {
    fee_payer: owner, user: owner, recipient, composable_policy: policy, user_payment: userPayment, gateway, config: pdas.config(),
    pre_validation_pda: PROGRAM_ID, post_validation_pda: PROGRAM_ID, pre_validation_program: SYSTEM_PROGRAM_ID,
    post_validation_program: SYSTEM_PROGRAM_ID, input_mint: USDC, output_mint: USDC,
  }, {
    policy_type: policyType, memo: zeros(32), forward_config: forward, pre_validation: { Disabled: {} }, pre_init: init,
    post_validation: { Disabled: {} }, post_init: init,
  });
  return { policy, policyId, ix };
}

/** The owner's approve of `amount` to its user payment PDA (the delegate the SDK sets). */
export function approveOwnIx(owner: PublicKey, amount: bigint): TransactionInstruction {
  return approveIx(pdas.associatedToken(owner, USDC).toBase58(), pdas.userPayment(owner, USDC).toBase58(), owner.toBase58(), amount);
}

/** execute_payment by `caller`; token accounts are the owners' associated ones, the protocol's the admin's. */
export function executeIx(
  net: RulesNet, o: { caller: PublicKey; owner: PublicKey; policy: PublicKey; gateway: { address: PublicKey; feeRecipient: { publicKey: PublicKey } }; recipient: PublicKey; amount?: bigint },
): TransactionInstruction {
  const ata = (w: PublicKey): PublicKey => pdas.associatedToken(w, USDC);
  return tributaryIx('execute_payment', {
    fee_payer: o.caller, payments_delegate: pdas.paymentsDelegate(), payment_policy: o.policy, user_payment: pdas.userPayment(o.owner, USDC),
    gateway: o.gateway.address, config: pdas.config(), user_token_account: ata(o.owner), mint: USDC, recipient_token_account: ata(o.recipient),
    gateway_fee_account: ata(o.gateway.feeRecipient.publicKey), protocol_fee_account: ata(net.actors.admin.publicKey),
  }, { payment_amount: o.amount === undefined ? null : new BN(o.amount.toString()) });
}

/** execute_composable by `caller`, without forwarding: the accounts execute_payment takes plus the composable ones. */
export function executeComposableIx(
  net: RulesNet, o: { caller: PublicKey; owner: PublicKey; policy: PublicKey; gateway: { address: PublicKey; feeRecipient: { publicKey: PublicKey } }; recipient: PublicKey },
): TransactionInstruction {
  const ata = (w: PublicKey): PublicKey => pdas.associatedToken(w, USDC);
  return tributaryIx('execute_composable', {
    fee_payer: o.caller, payments_delegate: pdas.paymentsDelegate(), composable_policy: o.policy, user_payment: pdas.userPayment(o.owner, USDC),
    gateway: o.gateway.address, config: pdas.config(), pre_validation_program: SYSTEM_PROGRAM_ID, post_validation_program: SYSTEM_PROGRAM_ID,
    pre_validation_pda: PROGRAM_ID, post_validation_pda: PROGRAM_ID, user_token_account: ata(o.owner), mint: USDC, output_mint: USDC,
    intermediate_input_token_account: ata(pdas.paymentsDelegate()), intermediate_output_token_account: ata(pdas.paymentsDelegate()),
    recipient_token_account: ata(o.recipient), gateway_fee_account: ata(o.gateway.feeRecipient.publicKey), protocol_fee_account: ata(net.actors.admin.publicKey),
  }, { instruction_data: Buffer.alloc(8), forward_amount: null });
}

/** set_emergency_pause by the admin. */
export async function setPause(net: RulesNet, paused: boolean): Promise<Sent> {
  const admin = net.actors.admin;
  return net.send(admin, [tributaryIx('set_emergency_pause', { admin: admin.publicKey, config: pdas.config() }, { paused })]);
}

export const subscription = (amount: number, o: { maxRenewals?: number | null; due?: number; frequency?: object } = {}): object => ({
  Subscription: {
    amount: bn(amount), auto_renew: true, max_renewals: o.maxRenewals ?? null, payment_frequency: o.frequency ?? { Monthly: {} },
    next_payment_due: bn(o.due ?? 0), padding: zeros(97),
  },
});

export const payg = (perPeriod: number, chunk: number, o: { period?: number; periodTotal?: number } = {}): object => ({
  PayAsYouGo: {
    max_amount_per_period: bn(perPeriod), max_chunk_amount: bn(chunk), period_length_seconds: bn(o.period ?? 3_600),
    current_period_start: bn(0), current_period_total: bn(o.periodTotal ?? 0), expiry_date: null, padding: zeros(79),
  },
});

export const oneTime = (amount: number, due: number, expiry: number | null): object => ({
  OneTime: { amount: bn(amount), due_date: bn(due), expiry_date: expiry === null ? null : bn(expiry), padding: zeros(103) },
});

export const milestone = (amounts: number[], stamps: number[], o: { release?: number; escrow?: number; current?: number } = {}): object => ({
  Milestone: {
    milestone_amounts: [0, 1, 2, 3].map((i) => bn(amounts[i] ?? 0)), milestone_timestamps: [0, 1, 2, 3].map((i) => bn(stamps[i] ?? 0)),
    current_milestone: o.current ?? 0, release_condition: o.release ?? 0, total_milestones: amounts.length,
    escrow_amount: bn(o.escrow ?? amounts.reduce((a, b) => a + b, 0)), padding: zeros(53),
  },
});
