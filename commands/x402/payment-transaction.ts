/**
 * The payer's side of a payment: the signed transaction that answers an `accepts` entry,
 * and the `Payment` header carrying it. It reads the payer's user payment from the chain
 * (to know whether to create it, and the new policy's id: created_policies_count + 1) and
 * a recent blockhash, then builds create_user_payment (when needed) + create_payment_policy
 * with the requirement's terms, and signs with the wallet (payer and fee payer).
 */
import { TransactionMessage, VersionedTransaction, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { createPdaDeriver } from '../../src/domain/pda.js';
import { PROGRAM_ID } from '../../src/idl/index.js';
import { encodePaymentHeader } from './payload.js';
import { signPaymentProof } from './proof.js';
import { associatedTokenAddress, createPaymentPolicyIx, createUserPaymentIx, policyTypeArg } from './program.js';
import { normalizeRequirement, type AcceptedRequirement } from './requirements.js';

export interface BuiltPayment {
  /** the `Payment` header value */
  header: string;
  transaction: VersionedTransaction;
  signature: string;
  /** the policy the transaction creates */
  policyAddress: string;
  createsUserPayment: boolean;
}

/** x402://upto: the window the 402 answer offered, or one from now of maxTimeoutSeconds. */
function uptoWindow(a: AcceptedRequirement): { validAfter: number; deadline: number } | undefined {
  if (a.scheme !== 'x402://upto') return undefined;
  const now = Math.floor(Date.now() / 1000);
  const validAfter = a.validAfter ?? now;
  return { validAfter, deadline: a.deadline ?? validAfter + (a.maxTimeoutSeconds ?? 3600) };
}

export async function buildPayment(
  accepted: AcceptedRequirement, opts: { wallet: Keypair; rpc: RpcClient; commitment?: Commitment; programId?: string; signedAt?: number },
): Promise<BuiltPayment> {
  const programId = opts.programId ?? accepted.extra?.programId ?? PROGRAM_ID;
  const r = normalizeRequirement({ ...accepted, maxRenewals: accepted.maxRenewals ?? null }, programId);
  const pdas = createPdaDeriver(programId);
  const payer = opts.wallet.publicKey.toBase58();
  const commitment = opts.commitment ?? 'confirmed';
  const userPayment = pdas.userPayment(payer, r.tokenMint);
  const up = await readProgramAccount(opts.rpc, userPayment, 'UserPayment', { programId, commitment });
  if (up.kind === 'mismatch') throw new Error(`${userPayment} is not a user payment account: ${up.reason}`);
  const count = up.kind === 'found' ? Number(up.data['created_policies_count']) : 0;
  const policyAddress = pdas.paymentPolicy(userPayment, count + 1);
  const config = pdas.config();

  const instructions: TransactionInstruction[] = [];
  if (up.kind === 'missing') {
    instructions.push(createUserPaymentIx(programId, {
      owner: payer, user_payment: userPayment, token_account: associatedTokenAddress(payer, r.tokenMint), token_mint: r.tokenMint, config, fee_payer: payer,
    }));
  }
  instructions.push(createPaymentPolicyIx(programId, {
    user: payer, user_payment: userPayment, recipient: r.recipient, token_mint: r.tokenMint, gateway: r.gateway, config,
    payment_policy: policyAddress, fee_payer: payer,
  }, policyTypeArg(r, uptoWindow(accepted)), r.memo));

  const { value } = await opts.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{ commitment }]);
  const message = new TransactionMessage({ payerKey: opts.wallet.publicKey, recentBlockhash: value.blockhash, instructions }).compileToLegacyMessage();
  const transaction = new VersionedTransaction(message);
  transaction.sign([opts.wallet]);
  const serializedTransaction = Buffer.from(transaction.serialize()).toString('base64');
  const signature = bs58.encode(transaction.signatures[0]!);
  // the payer's proof (proof.ts): only the wallet that signed may present this payment
  const proof = signPaymentProof(opts.wallet.secretKey, { requirementId: accepted.id, resource: accepted.resource, transactionSignature: signature },
    opts.signedAt ?? Math.floor(Date.now() / 1000));
  const header = encodePaymentHeader({ scheme: accepted.scheme, network: accepted.network, id: accepted.id, payload: { serializedTransaction, proof } });
  return { header, transaction, signature, policyAddress, createsUserPayment: up.kind === 'missing' };
}
