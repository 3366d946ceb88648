/**
 * The Tributary instructions a payment carries, encoded by the one encoder
 * (infra/solana/instructions.ts) and decoded here with Anchor's BorshCoder from the same
 * IDL. The client builds with these functions and the middleware decodes with them, so
 * both sides read one definition.
 *
 *   create_user_payment   owner, user_payment, token_account, token_mint, config, system_program, fee_payer
 *   create_payment_policy user, user_payment, recipient, token_mint, gateway, config, payment_policy,
 *                         system_program, fee_payer; args policy_type, memo [u8; 64]
 *   execute_payment       fee_payer, payments_delegate, payment_policy, user_payment, gateway, config,
 *                         user_token_account, mint, recipient_token_account, gateway_fee_account,
 *                         protocol_fee_account, token_program (+ remaining); args payment_amount Option<u64>
 */
import { BorshCoder } from '@coral-xyz/anchor';
import BN from 'bn.js';
import { PublicKey, type TransactionInstruction } from '@solana/web3.js';
import { idl } from '../../src/kernel/idl/index.js';
import { instructionAccounts, programInstruction } from '../../infra/solana/instructions.js';
import { normalizeIdlValue, textToFixedBytes } from '../../src/kernel/events/codec.js';
import { asPolicyType, type Frequency, type PolicyType } from '../../src/kernel/domain/policy-type.js';
import { PAYMENT_MEMO_BYTES } from '../../src/kernel/domain/memo.js';
import type { DeferredRequirement, PaygRequirement, PrepaidRequirement, UptoRequirement } from './requirements.js';

export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';
export const COMPUTE_BUDGET_PROGRAM_ID = 'ComputeBudget111111111111111111111111111111';

export type PaymentIxName = 'create_user_payment' | 'create_payment_policy' | 'execute_payment';

const coder = new BorshCoder(idl);

/** The account names of an instruction, in the IDL's order. */
export function accountNames(name: PaymentIxName): string[] {
  return instructionAccounts(name);
}

export { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';

const instruction = (programId: string, name: PaymentIxName, accounts: Record<string, string>, args: Record<string, unknown>): TransactionInstruction =>
  programInstruction(programId, name, accounts, args);

export interface UserPaymentAccounts { owner: string; user_payment: string; token_account: string; token_mint: string; config: string; fee_payer: string }
export interface PolicyAccounts {
  user: string; user_payment: string; recipient: string; token_mint: string; gateway: string; config: string;
  payment_policy: string; fee_payer: string;
}

export interface ExecuteAccounts {
  fee_payer: string; payments_delegate: string; payment_policy: string; user_payment: string; gateway: string; config: string;
  user_token_account: string; mint: string; recipient_token_account: string; gateway_fee_account: string; protocol_fee_account: string;
}

/** execute_payment; `remaining` follows the IDL's accounts (the scheduler's token account goes last). */
export function executePaymentIx(programId: string, accounts: ExecuteAccounts, amount: bigint | null, remaining: string[] = []): TransactionInstruction {
  const ix = instruction(programId, 'execute_payment', { ...accounts }, { payment_amount: amount === null ? null : new BN(amount.toString()) });
  ix.keys.push(...remaining.map((k) => ({ pubkey: new PublicKey(k), isSigner: false, isWritable: true })));
  return ix;
}

export function createUserPaymentIx(programId: string, accounts: UserPaymentAccounts): TransactionInstruction {
  return instruction(programId, 'create_user_payment', { ...accounts }, {});
}

export function createPaymentPolicyIx(programId: string, accounts: PolicyAccounts, policyType: unknown, memo: string | undefined): TransactionInstruction {
  const bytes = textToFixedBytes(memo ?? '', PAYMENT_MEMO_BYTES);
  if (!bytes) throw new Error(`memo does not fit in ${PAYMENT_MEMO_BYTES} bytes`);
  return instruction(programId, 'create_payment_policy', { ...accounts }, { policy_type: policyType, memo: [...bytes] });
}

const unit = {};
const zeros = (n: number): number[] => new Array<number>(n).fill(0);

function frequencyArg(f: Frequency): unknown {
  return typeof f === 'string' ? { [f]: unit } : { Custom: { 0: new BN(f.value) } };
}

/**
 * The policy_type arguments a Payment transaction creates, in BorshCoder's form (each
 * scheme picks its own). A subscription's first payment falls due at once (0: the program
 * moves a past due date to "now"); a pay-as-you-go period starts at creation (the program
 * sets it) and never expires; a credit is due at once and never expires.
 */
export const policyTypeArgs = {
  subscription: (r: DeferredRequirement): unknown => ({
    Subscription: {
      amount: new BN(r.amount.toString()), auto_renew: r.autoRenew, max_renewals: r.maxRenewals,
      payment_frequency: frequencyArg(r.paymentFrequency), next_payment_due: new BN(0), padding: zeros(97),
    },
  }),
  payAsYouGo: (r: PaygRequirement): unknown => ({
    PayAsYouGo: {
      max_amount_per_period: new BN(r.maxAmountPerPeriod.toString()), max_chunk_amount: new BN(r.maxChunkAmount.toString()),
      period_length_seconds: new BN(r.periodLengthSeconds.toString()), current_period_start: new BN(0),
      current_period_total: new BN(0), expiry_date: null, padding: zeros(79),
    },
  }),
  upTo: (r: UptoRequirement, window: { validAfter: number; deadline: number }): unknown => ({
    UpTo: { max_amount: new BN(r.amount.toString()), valid_after: new BN(window.validAfter), deadline: new BN(window.deadline), padding: zeros(104) },
  }),
  oneTime: (r: PrepaidRequirement): unknown => ({
    OneTime: { amount: new BN(r.amount.toString()), due_date: new BN(0), expiry_date: null, padding: zeros(103) },
  }),
};

export type DecodedIx =
  | { name: 'create_user_payment' }
  | { name: 'create_payment_policy'; policyType: PolicyType; memo: Buffer }
  | { name: 'execute_payment'; amount: bigint | null }
  | { name: 'other'; idlName: string };

/** The Tributary instruction in `data`, or undefined when it does not decode. */
export function decodePaymentIx(data: Uint8Array): DecodedIx | undefined {
  let d: { name: string; data: unknown } | null;
  try {
    d = coder.instruction.decode(Buffer.from(data));
  } catch {
    return undefined;
  }
  if (!d) return undefined;
  if (d.name === 'create_user_payment') return { name: 'create_user_payment' };
  if (d.name === 'execute_payment') {
    const amount = (d.data as { payment_amount: BN | null }).payment_amount;
    return { name: 'execute_payment', amount: amount === null ? null : BigInt(amount.toString()) };
  }
  if (d.name !== 'create_payment_policy') return { name: 'other', idlName: d.name };
  const args = d.data as { policy_type: unknown; memo: number[] };
  try {
    const policyType = asPolicyType(normalizeIdlValue('PolicyType', args.policy_type));
    return { name: 'create_payment_policy', policyType, memo: Buffer.from(args.memo) };
  } catch {
    return undefined;
  }
}
