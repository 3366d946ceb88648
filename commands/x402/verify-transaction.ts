/**
 * The checks a Payment transaction passes before anything reaches the chain. All of them
 * are pure (no RPC): a tampered transaction is refused without a network call.
 *
 *   - it deserializes; legacy or v0 without address lookup tables (every account must be
 *     visible to be checked);
 *   - every required signer signed, and each signature verifies;
 *   - it calls only the Tributary program and the ComputeBudget program: exactly one
 *     create_payment_policy, optionally one create_user_payment before it;
 *   - create_payment_policy: the user is a signer (the payer), user_payment is the PDA
 *     (payer, mint), recipient, token mint and gateway are the requirement's, config is
 *     the program's PDA, the policy type carries the requirement's terms and falls due
 *     now, and the memo is the requirement's when it names one;
 *   - create_user_payment: for the same owner, user payment and mint.
 * The policy address is the instruction's payment_policy account; the program checks it
 * is the PDA (user payment, count + 1), and the account is read back after confirmation.
 */
import { VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { PdaDeriver } from '../../src/domain/pda.js';
import { PAYMENT_MEMO_BYTES } from '../../src/domain/memo.js';
import { textToFixedBytes } from '../../src/events/codec.js';
import { accountNames, COMPUTE_BUDGET_PROGRAM_ID, decodePaymentIx, SYSTEM_PROGRAM_ID, type PaymentIxName } from './program.js';
import type { PaymentRequirement } from './requirements.js';
import { signatureProblem } from './signatures.js';
import { checkNewPolicyTerms } from './terms.js';

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
}

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

interface Ix { index: number; program: string; accounts: string[]; data: Uint8Array }

/** The instruction's accounts by IDL name; a reason when the count is short. */
function named(ix: Ix, name: PaymentIxName): Record<string, string> | string {
  const names = accountNames(name);
  if (ix.accounts.length < names.length) return `instruction ${ix.index} (${name}) has ${ix.accounts.length} accounts; it needs ${names.length}`;
  return Object.fromEntries(names.map((n, i) => [n, ix.accounts[i] ?? '']));
}

export function checkPaymentTransaction(
  wire: string, r: PaymentRequirement, opts: { pdas: PdaDeriver; nowSeconds: number },
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
  let userPaymentIx: Ix | undefined;
  let policyIx: { ix: Ix; decoded: Extract<ReturnType<typeof decodePaymentIx>, { name: 'create_payment_policy' }> } | undefined;
  for (const ix of ixs) {
    if (ix.program === COMPUTE_BUDGET_PROGRAM_ID) continue;
    if (ix.program !== programId) return fail(`instruction ${ix.index} calls ${ix.program}; a payment calls only the Tributary program ${programId}`);
    const d = decodePaymentIx(ix.data);
    if (!d) return fail(`instruction ${ix.index} is not a Tributary instruction that decodes`);
    if (d.name === 'other') return fail(`instruction ${ix.index} is ${d.idlName}; a payment carries create_payment_policy (and create_user_payment)`);
    if (d.name === 'create_user_payment') {
      if (userPaymentIx || policyIx) return fail('create_user_payment may appear once, before create_payment_policy');
      userPaymentIx = ix;
    } else {
      if (policyIx) return fail('a payment creates exactly one policy');
      policyIx = { ix, decoded: d };
    }
  }
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
  const terms = checkNewPolicyTerms(r, policyIx.decoded.policyType, opts.nowSeconds);
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
  const signature = bs58.encode(tx.signatures[0] ?? new Uint8Array(64));
  return {
    ok: true,
    payment: {
      tx, wire, signature, payer, userPayment, policyAddress: a['payment_policy'] ?? '', createsUserPayment: userPaymentIx !== undefined,
      recentBlockhash: message.recentBlockhash,
    },
  };
}
