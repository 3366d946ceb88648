/**
 * The checks a Payment transaction passes before anything reaches the chain. All of them
 * are pure (no RPC): a tampered transaction is refused without a network call. The shape
 * accepted is the one the SDK builds (PROGRAM.md §4), in this order:
 *
 *   - ComputeBudget instructions, anywhere;
 *   - create-idempotent (or create) of the payer's associated token account, optional;
 *   - create_user_payment, optional, before the policy: same owner, user payment and mint;
 *   - create_payment_policy, exactly one: the user is a signer (the payer), user_payment
 *     is the PDA (payer, mint), recipient, mint and gateway are the requirement's, config
 *     the program's PDA, the policy type carries the requirement's terms and falls due
 *     now, the memo is the requirement's when it names one;
 *   - an SPL revoke (optional) and exactly one approve of the payer's token account to the
 *     user payment PDA (the legacy payments PDA is honored) for at least the policy's
 *     yearly allowance (verify-token-ixs.ts);
 *   - a scheme that is paid in the transaction itself (`firstPayment`: `deferred` and
 *     `x402://prepaid`) only: the fee accounts' ATA creations (optional), then
 *     execute_payment by the payer, after the approve, paying the first period (the
 *     credit, for prepaid): the policy, user payment,
 *     gateway, config, payer's token account, mint and recipient's token account are the
 *     requirement's, no amount, and at most one remaining account, the payer's own token
 *     account (the scheduler cut when the gateway has a scheduler share). The fee
 *     accounts' owners are checked by the program itself. `x402://payg` and
 *     `x402://upto` carry none.
 * Anything else (another program, a transfer, a second policy) is refused with a reason.
 */
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import type { PolicyType } from '../../src/kernel/domain/policy-type.js';
import { PAYMENT_MEMO_BYTES } from '../../src/kernel/domain/memo.js';
import { associatedTokenAddress, ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM } from '../../src/kernel/domain/spl-token.js';
import { textToFixedBytes } from '../../src/kernel/events/codec.js';
import { accountNames, COMPUTE_BUDGET_PROGRAM_ID, decodePaymentIx, SYSTEM_PROGRAM_ID, type DecodedIx, type PaymentIxName } from './program.js';
import type { PaymentRequirement } from './requirements.js';
import { signatureProblem } from './signatures.js';
import { checkAtaIx, checkTokenIxs, MAX_ATA_CREATIONS, paymentsDelegate, type ApproveCheck, type Ix } from './verify-token-ixs.js';

export interface CheckedPayment {
  tx: VersionedTransaction;
  /** base64 of the wire bytes, as sent */
  wire: string;
  /** the first signature: the transaction's id on chain */
  signature: string;
  payer: string;
  userPayment: string;
  policyAddress: string;
  createsUserPayment: boolean;
  recentBlockhash: string;
  /** the approve the transaction carries */
  approve: ApproveCheck;
  /** `deferred` and `x402://prepaid`: the first period (the credit) is paid in the transaction itself */
  paysFirstPeriod: boolean;
}

/**
 * A scheme whose first payment rides in the Payment transaction (an execute_payment by the
 * payer), in its own words: `payment` what the transaction pays ("a deferred payment pays its
 * first period"), `policy` the policy it executes ("a subscription").
 */
export interface FirstPayment { payment: string; policy: string }

export type TxCheck = { ok: true; payment: CheckedPayment } | { ok: false; reason: string };

const MAX_TX_BYTES = 1232;

function deserialize(wire: string): VersionedTransaction | string {
  const bytes = Buffer.from(wire, 'base64');
  if (bytes.length === 0 || bytes.length > MAX_TX_BYTES) return `the transaction is ${bytes.length} bytes; a Solana transaction is 1 to ${MAX_TX_BYTES}`;
  try {
    return VersionedTransaction.deserialize(bytes);
  } catch (err) {
    return `the transaction does not deserialize: ${(err as Error).message}`;
  }
}

/** The instruction's accounts by IDL name; a reason when the count is short. */
function named(ix: Ix, name: PaymentIxName): Record<string, string> | string {
  const names = accountNames(name);
  if (ix.accounts.length < names.length) return `instruction ${ix.index} (${name}) has ${ix.accounts.length} accounts; it needs ${names.length}`;
  return Object.fromEntries(names.map((n, i) => [n, ix.accounts[i] ?? '']));
}

type PolicyDecoded = Extract<DecodedIx, { name: 'create_payment_policy' }>;

interface Sorted { userPaymentIx?: Ix; policyIx?: { ix: Ix; decoded: PolicyDecoded }; executeIx?: { ix: Ix; amount: bigint | null }; tokenIxs: Ix[]; ataIxs: Ix[] }

/** Sorts the instructions by kind, refusing other programs and misplaced Tributary instructions. */
function sortInstructions(ixs: readonly Ix[], programId: string): Sorted | string {
  const s: Sorted = { tokenIxs: [], ataIxs: [] };
  for (const ix of ixs) {
    if (ix.program === COMPUTE_BUDGET_PROGRAM_ID) continue;
    if (ix.program === TOKEN_PROGRAM) {
      s.tokenIxs.push(ix);
      continue;
    }
    if (ix.program === ASSOCIATED_TOKEN_PROGRAM) {
      s.ataIxs.push(ix);
      continue;
    }
    if (ix.program !== programId) {
      return `instruction ${ix.index} calls ${ix.program}; a payment calls only the Tributary program ${programId}, the token and associated token account programs, and ComputeBudget`;
    }
    if (s.executeIx) return 'execute_payment must be the last Tributary instruction';
    const d = decodePaymentIx(ix.data);
    if (!d) return `instruction ${ix.index} is not a Tributary instruction that decodes`;
    if (d.name === 'other') return `instruction ${ix.index} is ${d.idlName}; a payment carries create_payment_policy (with create_user_payment and execute_payment)`;
    if (d.name === 'create_user_payment') {
      if (s.userPaymentIx || s.policyIx) return 'create_user_payment may appear once, before create_payment_policy';
      s.userPaymentIx = ix;
    } else if (d.name === 'create_payment_policy') {
      if (s.policyIx) return 'a payment creates exactly one policy';
      s.policyIx = { ix, decoded: d };
    } else {
      if (!s.policyIx) return 'execute_payment must follow create_payment_policy';
      s.executeIx = { ix, amount: d.amount };
    }
  }
  if (s.ataIxs.length > MAX_ATA_CREATIONS) return `a payment creates at most ${MAX_ATA_CREATIONS} token accounts`;
  return s;
}

/** The first payment, executed by the payer in the same transaction (deferred and prepaid). */
function checkExecute(
  ex: { ix: Ix; amount: bigint | null }, c: { payer: string; policy: string; userPayment: string; r: PaymentRequirement; pdas: PdaDeriver; first: FirstPayment },
): string | undefined {
  const a = named(ex.ix, 'execute_payment');
  if (typeof a === 'string') return a;
  const ata = (w: string): string => associatedTokenAddress(w, c.r.tokenMint);
  const want: Record<string, string> = {
    fee_payer: c.payer, payments_delegate: paymentsDelegate(c.pdas.programId), payment_policy: c.policy, user_payment: c.userPayment,
    gateway: c.r.gateway, config: c.pdas.config(), user_token_account: ata(c.payer), mint: c.r.tokenMint,
    recipient_token_account: ata(c.r.recipient), token_program: TOKEN_PROGRAM,
  };
  for (const [name, value] of Object.entries(want)) {
    if (a[name] !== value) return `execute_payment's ${name} is ${a[name] ?? 'missing'}; it must be ${value}`;
  }
  if (ex.amount !== null) return `execute_payment of ${c.first.policy} carries no amount (the program charges the policy's own)`;
  const remaining = ex.ix.accounts.slice(accountNames('execute_payment').length);
  if (remaining.length > 1 || (remaining[0] !== undefined && remaining[0] !== ata(c.payer))) {
    return 'execute_payment\'s only remaining account may be the payer\'s own token account (the scheduler cut of a gateway with a scheduler share)';
  }
  return undefined;
}

/**
 * `opts.firstPayment`: the scheme pays its first period in the transaction; absent, the
 * transaction executes no payment. `opts.newTerms`: the scheme's check of the policy type it
 * creates (its terms and schedule).
 */
export function checkPaymentTransaction(
  wire: string, r: PaymentRequirement,
  opts: {
    pdas: PdaDeriver; nowSeconds: number; firstPayment?: FirstPayment | undefined; newTerms(type: PolicyType): string | undefined;
    allowance: { amount: bigint; formula: string };
  },
): TxCheck {
  const fail = (reason: string): TxCheck => ({ ok: false, reason });
  const tx = deserialize(wire);
  if (typeof tx === 'string') return fail(tx);
  const message = tx.message;
  if (message.version !== 'legacy' && message.addressTableLookups.length > 0) return fail('address lookup tables are not accepted in a payment');
  const sigProblem = signatureProblem(tx);
  if (sigProblem) return fail(sigProblem);

  const keys = message.staticAccountKeys.map((k) => k.toBase58());
  const signers = new Set(keys.slice(0, message.header.numRequiredSignatures));
  const ixs: Ix[] = message.compiledInstructions.map((c, index) => ({
    index, program: keys[c.programIdIndex] ?? '', accounts: c.accountKeyIndexes.map((i) => keys[i] ?? ''), data: c.data,
  }));
  const programId = opts.pdas.programId;
  const sorted = sortInstructions(ixs, programId);
  if (typeof sorted === 'string') return fail(sorted);
  const { userPaymentIx, policyIx, executeIx } = sorted;
  if (!policyIx) return fail('the transaction has no create_payment_policy instruction');

  const a = named(policyIx.ix, 'create_payment_policy');
  if (typeof a === 'string') return fail(a);
  const payer = a['user'] ?? '';
  if (!signers.has(payer)) return fail('the policy owner (user) did not sign the transaction');
  if (a['token_mint'] !== r.tokenMint) return fail(`the token mint is ${a['token_mint']}; the requirement asks ${r.tokenMint}`);
  if (a['recipient'] !== r.recipient) return fail(`the recipient is ${a['recipient']}; the requirement asks ${r.recipient}`);
  if (a['gateway'] !== r.gateway) return fail(`the gateway is ${a['gateway']}; the requirement asks ${r.gateway}`);
  const userPayment = opts.pdas.userPayment(payer, r.tokenMint);
  if (a['user_payment'] !== userPayment) return fail(`user_payment is not the payer's user payment account ${userPayment}`);
  if (a['config'] !== opts.pdas.config()) return fail('config is not the program config account');
  if (a['system_program'] !== SYSTEM_PROGRAM_ID) return fail('system_program is not the system program');
  const terms = opts.newTerms(policyIx.decoded.policyType);
  if (terms) return fail(terms);
  if (r.memo !== undefined) {
    const want = textToFixedBytes(r.memo, PAYMENT_MEMO_BYTES);
    if (!want?.equals(policyIx.decoded.memo)) return fail(`the memo must be ${JSON.stringify(r.memo)}`);
  }

  if (userPaymentIx) {
    const u = named(userPaymentIx, 'create_user_payment');
    if (typeof u === 'string') return fail(u);
    if (u['owner'] !== payer || u['user_payment'] !== userPayment || u['token_mint'] !== r.tokenMint) {
      return fail('create_user_payment is not for the payer and the requirement\'s mint');
    }
  }
  for (const ix of sorted.ataIxs) {
    const problem = checkAtaIx(ix, payer, r, opts.firstPayment !== undefined);
    if (problem) return fail(problem);
  }
  const token = checkTokenIxs(sorted.tokenIxs, payer, r, userPayment, programId, opts.allowance);
  if (!token.ok) return fail(token.reason);

  const policyAddress = a['payment_policy'] ?? '';
  const first = opts.firstPayment;
  if (first) {
    if (!executeIx) return fail(`${first.payment} in the same transaction: execute_payment by the payer is missing`);
    if (executeIx.ix.index < token.approveIndex) return fail('execute_payment must come after the approve it draws on');
    const problem = checkExecute(executeIx, { payer, policy: policyAddress, userPayment, r, pdas: opts.pdas, first });
    if (problem) return fail(problem);
  } else if (executeIx) {
    return fail('a pay-as-you-go payment is charged per request; its Payment transaction executes no payment');
  }
  const signature = bs58.encode(tx.signatures[0] ?? new Uint8Array(64));
  return {
    ok: true,
    payment: {
      tx, wire, signature, payer, userPayment, policyAddress, createsUserPayment: userPaymentIx !== undefined,
      recentBlockhash: message.recentBlockhash, approve: token.approve, paysFirstPeriod: executeIx !== undefined,
    },
  };
}
