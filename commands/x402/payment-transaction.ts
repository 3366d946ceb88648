/**
 * The payer's side of a payment: the signed transaction that answers an `accepts` entry,
 * built as the SDK builds it (PROGRAM.md §4), and the `Payment` header carrying it:
 *
 *   1. create-idempotent of the payer's token account, when it is missing;
 *   2. create_user_payment, when the payer has none for the mint;
 *   3. create_payment_policy with the requirement's terms (id: created_policies_count + 1);
 *   4. SPL revoke + approve of the user payment PDA for the SDK's allowance (the new
 *      policy's yearly amount plus the payer's existing policies', allowance.ts);
 *   5. `deferred` and `x402://prepaid`: create-idempotent of the recipient's, the gateway
 *      fee recipient's and the protocol fee recipient's token accounts when missing, then
 *      execute_payment by the payer, paying the first period (the credit) now (the payer's
 *      own token account as the last remaining account when the gateway has a scheduler
 *      share: the cut comes back). A prepaid credit, or an upto maximum, through a net-mode
 *      gateway approves the fee on top, since the program then draws both.
 * Signed by the wallet (payer and fee payer).
 */
import { PublicKey, TransactionMessage, VersionedTransaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { readProgramAccount, readProgramAccounts } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import { asPolicyType, asStatus, type PolicyType } from '../../src/kernel/domain/policy-type.js';
import { approveIx, associatedTokenAddress, createAtaIdempotentIx, revokeIx } from '../../src/kernel/domain/spl-token.js';
import { PROGRAM_ID } from '../../src/kernel/idl/index.js';
import { totalAllowance } from './allowance.js';
import { decodePaymentHeader, encodePaymentHeader, type PaymentBody } from './payload.js';
import { freshSignedAt, signPaymentProof } from './proof.js';
import { createPaymentPolicyIx, createUserPaymentIx, executePaymentIx } from './program.js';
import { type AcceptedRequirement, type PaymentRequirement } from './requirements.js';
import { normalizeRequirement } from './requirement-forms.js';
import { schemeOf } from './schemes/index.js';
import { paymentsDelegate } from './verify-token-ixs.js';

export interface BuiltPayment {
  /** the `Payment` header value */
  header: string;
  transaction: VersionedTransaction;
  signature: string;
  /** the policy the transaction creates */
  policyAddress: string;
  createsUserPayment: boolean;
  /** what the approve allows the user payment PDA to draw */
  approvedAmount: bigint;
}

interface ReadCtx { rpc: RpcClient; programId: string; commitment: Commitment }

/** The payer's newest policies of the mint (up to 100), for the allowance sum. */
async function existingPolicies(c: ReadCtx, pdas: PdaDeriver, userPayment: string, count: number): Promise<PolicyType[]> {
  const ids: number[] = [];
  for (let id = count; id >= 1 && ids.length < 100; id -= 1) ids.push(id);
  if (ids.length === 0) return [];
  const reads = await readProgramAccounts(c.rpc, ids.map((id) => pdas.paymentPolicy(userPayment, id)), 'PaymentPolicy', c);
  return reads.flatMap((a) => (a.kind === 'found' && asStatus(a.data['status']) !== 'Completed' ? [asPolicyType(a.data['policy_type'])] : []));
}

async function missingAccounts(c: ReadCtx, addresses: string[]): Promise<Set<string>> {
  const r = await c.rpc.call<{ value: unknown[] }>('getMultipleAccounts', [addresses, { encoding: 'base64', commitment: c.commitment }]);
  return new Set(addresses.filter((_, i) => r.value[i] === null || r.value[i] === undefined));
}

async function readGateway(c: ReadCtx, r: PaymentRequirement) {
  const gateway = await readProgramAccount(c.rpc, r.gateway, 'PaymentGateway', c);
  if (gateway.kind !== 'found') throw new Error(`the requirement's gateway ${r.gateway} is not a payment gateway on this chain`);
  return gateway;
}

const NET_AMOUNT_FLAG = 0x02;

/** What the program draws on top of `amount` through this gateway: its fee in net mode (PROGRAM.md §2), else nothing. */
async function netModeFee(c: ReadCtx, r: PaymentRequirement): Promise<bigint> {
  const gateway = await readGateway(c, r);
  if ((Number(gateway.data['feature_flags'] ?? 0) & NET_AMOUNT_FLAG) === 0) return 0n;
  return (r.amount * BigInt(Number(gateway.data['gateway_fee_bps'] ?? 0))) / 10_000n;
}

/** The first period's execution and the fee accounts it needs, as the SDK's executeImmediately. */
async function firstPayment(c: ReadCtx, pdas: PdaDeriver, r: PaymentRequirement, payer: string, policy: string, userPayment: string): Promise<TransactionInstruction[]> {
  const gateway = await readGateway(c, r);
  const config = await readProgramAccount(c.rpc, pdas.config(), 'ProgramConfig', c);
  if (config.kind !== 'found') throw new Error('the program config account is missing on this chain');
  const feeRecipient = gateway.data['fee_recipient'];
  const protocol = config.data['fee_recipient'];
  if (typeof feeRecipient !== 'string' || typeof protocol !== 'string') throw new Error('the gateway or config account has no fee recipient');
  const ata = (w: string): string => associatedTokenAddress(w, r.tokenMint);
  const wallets = [...new Set([r.recipient, feeRecipient, protocol])];
  const missing = await missingAccounts(c, wallets.map(ata));
  const ixs = wallets.filter((w) => missing.has(ata(w))).map((w) => createAtaIdempotentIx(payer, w, r.tokenMint));
  const schedulerShare = Number(gateway.data['scheduler_share_bps'] ?? 0);
  ixs.push(executePaymentIx(c.programId, {
    fee_payer: payer, payments_delegate: paymentsDelegate(c.programId), payment_policy: policy, user_payment: userPayment,
    gateway: r.gateway, config: pdas.config(), user_token_account: ata(payer), mint: r.tokenMint,
    recipient_token_account: ata(r.recipient), gateway_fee_account: ata(feeRecipient), protocol_fee_account: ata(protocol),
  }, null, schedulerShare > 0 ? [ata(payer)] : []));
  return ixs;
}

/** The Payment transaction before any signature: what a wallet is asked to sign (a hosted checkout page's). */
export interface UnsignedPayment {
  transaction: VersionedTransaction;
  /** the policy the transaction creates */
  policyAddress: string;
  createsUserPayment: boolean;
  approvedAmount: bigint;
  /** the last block height at which its blockhash is still accepted */
  lastValidBlockHeight: number;
}

/** The transaction `buildPayment` signs, for `payer` (payer and fee payer), unsigned. */
export async function buildUnsignedPayment(
  accepted: AcceptedRequirement, opts: { payer: string; rpc: RpcClient; commitment?: Commitment; programId?: string },
): Promise<UnsignedPayment> {
  const programId = opts.programId ?? accepted.extra?.programId ?? PROGRAM_ID;
  const r = normalizeRequirement({ ...accepted, maxRenewals: accepted.maxRenewals ?? null }, programId);
  const scheme = schemeOf(r);
  const pdas = createPdaDeriver(programId);
  const payer = opts.payer;
  const c: ReadCtx = { rpc: opts.rpc, programId, commitment: opts.commitment ?? 'confirmed' };
  const userPayment = pdas.userPayment(payer, r.tokenMint);
  const up = await readProgramAccount(opts.rpc, userPayment, 'UserPayment', c);
  if (up.kind === 'mismatch') throw new Error(`${userPayment} is not a user payment account: ${up.reason}`);
  const count = up.kind === 'found' ? Number(up.data['created_policies_count']) : 0;
  const policyAddress = pdas.paymentPolicy(userPayment, count + 1);
  const config = pdas.config();
  const payerAta = associatedTokenAddress(payer, r.tokenMint);

  const instructions: TransactionInstruction[] = [];
  if ((await missingAccounts(c, [payerAta])).size > 0) instructions.push(createAtaIdempotentIx(payer, payer, r.tokenMint));
  if (up.kind === 'missing') {
    instructions.push(createUserPaymentIx(programId, {
      owner: payer, user_payment: userPayment, token_account: payerAta, token_mint: r.tokenMint, config, fee_payer: payer,
    }));
  }
  instructions.push(createPaymentPolicyIx(programId, {
    user: payer, user_payment: userPayment, recipient: r.recipient, token_mint: r.tokenMint, gateway: r.gateway, config,
    payment_policy: policyAddress, fee_payer: payer,
  }, scheme.policyType(r, accepted), r.memo));
  // the program draws amount + fee from the payer at a net-mode gateway: a credit, or an upto maximum, approves both
  const fee = scheme.feeOnTop ? await netModeFee(c, r) : 0n;
  const approvedAmount = totalAllowance(scheme.allowance(r).amount, await existingPolicies(c, pdas, userPayment, count)) + fee;
  instructions.push(revokeIx(payerAta, payer), approveIx(payerAta, userPayment, payer, approvedAmount));
  if (scheme.executesPayment) instructions.push(...await firstPayment(c, pdas, r, payer, policyAddress, userPayment));

  const { value } = await opts.rpc.call<{ value: { blockhash: string; lastValidBlockHeight: number } }>('getLatestBlockhash', [{ commitment: c.commitment }]);
  const message = new TransactionMessage({ payerKey: new PublicKey(payer), recentBlockhash: value.blockhash, instructions }).compileToLegacyMessage();
  return {
    transaction: new VersionedTransaction(message), policyAddress, createsUserPayment: up.kind === 'missing', approvedAmount,
    lastValidBlockHeight: value.lastValidBlockHeight,
  };
}

export async function buildPayment(
  accepted: AcceptedRequirement, opts: { wallet: Keypair; rpc: RpcClient; commitment?: Commitment; programId?: string; signedAt?: number },
): Promise<BuiltPayment> {
  const built = await buildUnsignedPayment(accepted, { ...opts, payer: opts.wallet.publicKey.toBase58() });
  const { transaction, policyAddress, createsUserPayment, approvedAmount } = built;
  transaction.sign([opts.wallet]);
  const serializedTransaction = Buffer.from(transaction.serialize()).toString('base64');
  const signature = bs58.encode(transaction.signatures[0]!);
  // the payer's proof (proof.ts): only the wallet that signed may present this payment
  const proof = signPaymentProof(opts.wallet.secretKey, { requirementId: accepted.id, resource: accepted.resource, transactionSignature: signature },
    opts.signedAt ?? freshSignedAt(opts.wallet.publicKey.toBase58(), Math.floor(Date.now() / 1000)));
  const header = encodePaymentHeader({ scheme: accepted.scheme, network: accepted.network, id: accepted.id, payload: { serializedTransaction, proof } });
  return { header, transaction, signature, policyAddress, createsUserPayment, approvedAmount };
}

/**
 * A payment presented again, with a fresh proof of the payer (proof.ts): a proof is answered
 * once (spent-proofs.ts), so a client that re-presents a payment (its answer lost, another call
 * of a tool under it) signs anew. The transaction, if any, stays the same bytes: the server
 * sends it once and answers it from its settlement. `f`: the requirement id and resource URL
 * the first proof named.
 */
export function resignPayment(body: PaymentBody, wallet: Keypair, f: { requirementId: string; resource: string }): PaymentBody {
  const transactionSignature = 'serializedTransaction' in body
    ? bs58.encode(VersionedTransaction.deserialize(Buffer.from(body.serializedTransaction, 'base64')).signatures[0] ?? new Uint8Array(64))
    : undefined;
  const signedAt = freshSignedAt(wallet.publicKey.toBase58(), Math.floor(Date.now() / 1000));
  return { ...body, proof: signPaymentProof(wallet.secretKey, { ...f, transactionSignature }, signedAt) };
}

/** A `Payment` header presented again with a fresh proof (resignPayment); `resource`: the URL its proof names. */
export function resignPaymentHeader(header: string, wallet: Keypair, resource: string): string {
  const d = decodePaymentHeader(header);
  if (!d.ok) throw new Error(d.reason);
  return encodePaymentHeader({ ...d.payment, payload: resignPayment(d.payment.payload, wallet, { requirementId: d.payment.id, resource }) });
}
