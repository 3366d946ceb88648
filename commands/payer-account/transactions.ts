/**
 * POST /v1/me/transactions: a transaction the payer's wallet signed, sent through the one
 * sender (infra/solana/sender.ts) once it is proven to do nothing but what the payer
 * account offers. It must be a legacy or v0 message without address lookup tables, paid
 * for and signed by the token's wallet alone (its signature valid over the message), and
 * hold only:
 *   - the program's change_payment_policy_status or delete_payment_policy with that wallet
 *     as owner, on the wallet's own user payment and one of its policies (the PDAs derived
 *     from the arguments and accounts, as the program derives them);
 *   - the token program's Revoke with that wallet as owner;
 *   - compute budget instructions (wallets add a priority fee; the wallet pays it).
 * Anything else (a transfer, an approve, another program, another wallet's policy) is a
 * 400 naming the instruction, and nothing is sent. This service relays, it never signs.
 */
import bs58 from 'bs58';
import { VersionedTransaction } from '@solana/web3.js';
import { BorshCoder } from '@coral-xyz/anchor';
import { idl } from '../../src/kernel/idl/index.js';
import type { PdaDeriver } from '../../src/kernel/domain/pda.js';
import { decodeTokenIx, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../../src/kernel/domain/spl-token.js';
import { verifyStrict } from '../../infra/crypto/ed25519.js';
import { invalid, conflict, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import { confirm, send, type SenderIo } from '../../infra/solana/sender.js';
import type { RelayResult } from '../../src/kernel/wire/answers/payer.js';

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** the largest wire transaction Solana takes */
const MAX_WIRE_BYTES = 1232;
const coder = new BorshCoder(idl);

export interface RelayDeps { io: SenderIo; pdas: PdaDeriver; confirmTimeoutMs: number }

// the answer's shape is the wire module's, which the account page reads as well
export type { RelayResult } from '../../src/kernel/wire/answers/payer.js';

/** The wire bytes of a base64 transaction, or a 400. */
function decodeWire(base64: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 !== 0) throw invalid('transaction must be base64 (standard alphabet, padded)');
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length > MAX_WIRE_BYTES) throw invalid(`transaction is ${bytes.length} bytes; a Solana transaction is at most ${MAX_WIRE_BYTES}`);
  return bytes;
}

function parse(bytes: Uint8Array): VersionedTransaction {
  try {
    return VersionedTransaction.deserialize(bytes);
  } catch {
    throw invalid('transaction is not a Solana wire transaction');
  }
}

/** What each instruction is, by name; a 400 for the first one the payer account does not offer. */
export function checkPayerTransaction(tx: VersionedTransaction, wallet: string, pdas: PdaDeriver): string[] {
  const msg = tx.message;
  if ('addressTableLookups' in msg && msg.addressTableLookups.length > 0) throw invalid('transaction uses address lookup tables; send one that names every account');
  const keys = msg.staticAccountKeys.map((k) => k.toBase58());
  if (keys[0] !== wallet) throw invalid(`the fee payer is ${keys[0] ?? 'missing'}, not the signed-in wallet ${wallet}`);
  if (msg.header.numRequiredSignatures !== 1) throw invalid(`the transaction needs ${msg.header.numRequiredSignatures} signers; only the signed-in wallet may sign it`);
  const signature = tx.signatures[0];
  if (!signature || !verifyStrict(signature, msg.serialize(), bs58.decode(wallet))) {
    throw invalid(`the transaction is not signed by ${wallet}: sign the unsigned transaction with that wallet`);
  }
  if (msg.compiledInstructions.length === 0) throw invalid('the transaction has no instructions');
  return msg.compiledInstructions.map((ix, n) => {
    const program = keys[ix.programIdIndex] ?? '';
    const accounts = ix.accountKeyIndexes.map((i) => keys[i] ?? '');
    const where = `instruction ${n}`;
    if (program === '' || accounts.includes('')) throw invalid(`${where} names an account index the message does not have`);
    if (program === COMPUTE_BUDGET_PROGRAM) return 'compute_budget';
    if (program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM) {
      const d = decodeTokenIx(ix.data, accounts);
      if (d.kind !== 'revoke') throw invalid(`${where}: a token program instruction other than Revoke (tag ${String(d.kind === 'other' ? d.tag : d.kind)}) is not one the payer account sends`);
      if (d.owner !== wallet) throw invalid(`${where}: Revoke of a token account owned by ${d.owner}, not ${wallet}`);
      return 'revoke';
    }
    if (program !== pdas.programId) throw invalid(`${where}: program ${program} is not one the payer account sends to`);
    return checkProgramInstruction(ix.data, accounts, wallet, pdas, where);
  });
}

function checkProgramInstruction(data: Uint8Array, accounts: string[], wallet: string, pdas: PdaDeriver, where: string): string {
  let decoded: ReturnType<typeof coder.instruction.decode> = null;
  try {
    decoded = coder.instruction.decode(Buffer.from(data));
  } catch {
    // arguments that do not decode: named below as an unknown instruction
  }
  const name = decoded?.name;
  if (!decoded || (name !== 'change_payment_policy_status' && name !== 'delete_payment_policy')) {
    throw invalid(`${where}: the program's ${name ?? 'unknown instruction'} is not one the payer account sends (change_payment_policy_status, delete_payment_policy)`);
  }
  // accounts in the IDL's order: owner, user_payment, token_mint, payment_policy, config (, rent_payer)
  const [owner, userPayment, mint, policy] = accounts;
  if (owner !== wallet) throw invalid(`${where}: ${name} for the owner ${owner ?? 'missing'}, not the signed-in wallet ${wallet}`);
  const policyId = Number((decoded.data as { policy_id: number }).policy_id);
  if (mint === undefined || userPayment !== pdas.userPayment(wallet, mint) || policy !== pdas.paymentPolicy(userPayment, policyId)) {
    throw invalid(`${where}: ${name} names a policy that is not one of ${wallet}'s`);
  }
  return name;
}

/** The transaction of the base64 text, checked (checkPayerTransaction); a 400 for anything else. */
export function inspectPayerTransaction(base64: string, wallet: string, pdas: PdaDeriver): { bytes: Uint8Array; tx: VersionedTransaction; instructions: string[] } {
  const bytes = decodeWire(base64);
  const tx = parse(bytes);
  return { bytes, tx, instructions: checkPayerTransaction(tx, wallet, pdas) };
}

/** Checks, sends and waits for the transaction; a refusal of the program is a 409 with its reason. */
export async function relayPayerTransaction(deps: RelayDeps, wallet: string, base64: string): Promise<RelayResult> {
  const { bytes, tx, instructions } = inspectPayerTransaction(base64, wallet, deps.pdas);
  const signature = bs58.encode(tx.signatures[0]!);
  const sent = await send(deps.io, Buffer.from(bytes).toString('base64'));
  if (sent.kind === 'refused') throw conflict(`the chain refused the transaction: ${sent.refusal.name} (${sent.refusal.message})`);
  if (sent.kind === 'in_doubt' && (sent.error.kind === 'blockhash_not_found' || sent.error.kind === 'rejected')) {
    // nothing of these bytes lands: an expired blockhash (ask for the action again), or no lamports for the fee
    throw invalid(`the chain did not take the transaction: ${sent.error.message}`);
  }
  const fate = await confirm(deps.io, signature, { timeoutMs: deps.confirmTimeoutMs });
  if (fate.kind === 'failed') throw conflict(`the transaction failed on chain: ${fate.refusal.name}`);
  if (fate.kind === 'landed') return { signature, status: 'confirmed', instructions };
  if (sent.kind === 'in_doubt' && fate.kind !== 'pending') throw upstreamUnavailable('the chain could not be reached; the signed transaction may be sent again as is');
  return { signature, status: 'pending', instructions };
}
