/**
 * x402://upto settlement (the program's UpTo policy, Tributary's ADR on UpTo): the payer
 * authorized up to `max_amount` until `deadline`; after serving, the merchant charges the
 * actual amount (0 allowed, at most the maximum) once, with an execute_payment it signs
 * as the policy's recipient or as the gateway's signer. The program completes the policy
 * on that execution, so a second settlement fails on chain; the service refuses it before
 * sending (a Redis mark per policy, and the policy no longer Active).
 *
 *   buildUptoSettlement   the merchant's side (a Node merchant, the tests): the signed transaction
 *   checkUptoSettlement   pure: exactly one execute_payment of that amount on that policy,
 *                         by an allowed signer, every signature valid
 */
import { BorshCoder } from '@coral-xyz/anchor';
import BN from 'bn.js';
import bs58 from 'bs58';
import { PublicKey, TransactionMessage, VersionedTransaction, type Keypair } from '@solana/web3.js';
import { readProgramAccount } from '../../infra/solana/accounts.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import { createPdaDeriver } from '../../src/kernel/domain/pda.js';
import { idl } from '../../src/kernel/idl/index.js';
import { associatedTokenAddress } from '../../src/kernel/domain/spl-token.js';
import { tributaryInstruction } from './upto-instruction.js';
import { COMPUTE_BUDGET_PROGRAM_ID } from './program.js';
import { signatureProblem } from './signatures.js';

const coder = new BorshCoder(idl);

/** An address field of a decoded account (the decoder gives base58 strings). */
export function field(data: Record<string, unknown>, name: string): string {
  const v = data[name];
  if (typeof v !== 'string') throw new Error(`account field ${name} is not an address`);
  return v;
}

/** The accounts an execute_payment on `policy` needs, read from the chain. */
export async function executeAccounts(rpc: RpcClient, programId: string, policy: string, commitment: Commitment = 'confirmed'): Promise<Record<string, string>> {
  const opts = { programId, commitment };
  const must = async (address: string, kind: string) => {
    const r = await readProgramAccount(rpc, address, kind, opts);
    if (r.kind !== 'found') throw new Error(`${kind} ${address} not found`);
    return r.data;
  };
  const pdas = createPdaDeriver(programId);
  const p = await must(policy, 'PaymentPolicy');
  const up = await must(field(p, 'user_payment'), 'UserPayment');
  const gw = await must(field(p, 'gateway'), 'PaymentGateway');
  const config = await must(pdas.config(), 'ProgramConfig');
  const mint = field(up, 'token_mint');
  const ata = (owner: string) => associatedTokenAddress(owner, mint);
  return {
    payments_delegate: PublicKey.findProgramAddressSync([Buffer.from('payments')], new PublicKey(programId))[0].toBase58(),
    payment_policy: policy, user_payment: field(p, 'user_payment'), gateway: field(p, 'gateway'), config: pdas.config(),
    user_token_account: field(up, 'token_account'), mint, recipient_token_account: ata(field(p, 'recipient')),
    gateway_fee_account: ata(field(gw, 'fee_recipient')), protocol_fee_account: ata(field(config, 'fee_recipient')),
    recipient: field(p, 'recipient'), gateway_signer: field(gw, 'signer'),
  };
}

/** The merchant's signed execute_payment of `amount` on an UpTo policy (base64 wire bytes and signature). */
export async function buildUptoSettlement(opts: {
  rpc: RpcClient; programId: string; policy: string; amount: bigint; signer: Keypair; commitment?: Commitment;
}): Promise<{ serializedTransaction: string; signature: string }> {
  const a = await executeAccounts(opts.rpc, opts.programId, opts.policy, opts.commitment);
  const ix = tributaryInstruction(opts.programId, 'execute_payment', { ...a, fee_payer: opts.signer.publicKey.toBase58() }, { payment_amount: new BN(opts.amount.toString()) });
  const { value } = await opts.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{ commitment: opts.commitment ?? 'confirmed' }]);
  const tx = new VersionedTransaction(new TransactionMessage({ payerKey: opts.signer.publicKey, recentBlockhash: value.blockhash, instructions: [ix] }).compileToLegacyMessage());
  tx.sign([opts.signer]);
  return { serializedTransaction: Buffer.from(tx.serialize()).toString('base64'), signature: bs58.encode(tx.signatures[0]!) };
}

/** The first signature of `wire` when it deserializes and every signature verifies, else undefined. */
export function verifiedSignature(wire: string): string | undefined {
  let tx: VersionedTransaction;
  try {
    tx = VersionedTransaction.deserialize(Buffer.from(wire, 'base64'));
  } catch {
    return undefined;
  }
  const first = tx.signatures[0];
  return first !== undefined && signatureProblem(tx) === undefined ? bs58.encode(first) : undefined;
}

export type UptoCheck = { ok: true; signature: string; signer: string } | { ok: false; reason: string };

/** Is `wire` exactly the merchant's settlement of `amount` on `policy`, signed by one of `allowed`? */
export function checkUptoSettlement(wire: string, o: { programId: string; policy: string; amount: bigint; allowed: readonly string[] }): UptoCheck {
  const fail = (reason: string): UptoCheck => ({ ok: false, reason });
  let tx: VersionedTransaction;
  try {
    const bytes = Buffer.from(wire, 'base64');
    if (bytes.length === 0 || bytes.length > 1232) return fail('the settlement transaction is not 1 to 1232 bytes');
    tx = VersionedTransaction.deserialize(bytes);
  } catch (err) {
    return fail(`the settlement transaction does not deserialize: ${(err as Error).message}`);
  }
  if (tx.message.version !== 'legacy' && tx.message.addressTableLookups.length > 0) return fail('address lookup tables are not accepted');
  const sig = signatureProblem(tx);
  if (sig) return fail(sig);
  const keys = tx.message.staticAccountKeys.map((k) => k.toBase58());
  const own = tx.message.compiledInstructions.filter((c) => keys[c.programIdIndex] !== COMPUTE_BUDGET_PROGRAM_ID);
  const ix = own[0];
  if (own.length !== 1 || !ix || keys[ix.programIdIndex] !== o.programId) return fail('the settlement must be exactly one execute_payment of the Tributary program');
  let d: { name: string; data: unknown } | null = null;
  try {
    d = coder.instruction.decode(Buffer.from(ix.data));
  } catch {
    d = null;
  }
  if (d?.name !== 'execute_payment') return fail('the settlement instruction is not execute_payment');
  const amount = (d.data as { payment_amount: BN | null }).payment_amount;
  if (!amount || amount.toString() !== o.amount.toString()) return fail(`the settlement charges ${amount?.toString() ?? 'no amount'}; the reported amount is ${o.amount}`);
  const feePayer = keys[ix.accountKeyIndexes[0] ?? -1];
  const policy = keys[ix.accountKeyIndexes[2] ?? -1];
  if (policy !== o.policy) return fail(`the settlement executes ${policy ?? 'no policy'}; the JWT's policy is ${o.policy}`);
  if (!feePayer || !o.allowed.includes(feePayer)) return fail('the settlement must be signed by the policy\'s recipient or the gateway\'s signer');
  if (!keys.slice(0, tx.message.header.numRequiredSignatures).includes(feePayer)) return fail('the caller did not sign the settlement');
  return { ok: true, signature: bs58.encode(tx.signatures[0]!), signer: feePayer };
}
