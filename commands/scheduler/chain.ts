/**
 * The scheduler's and the settler's side of the chain: read what an execute_payment needs
 * (policy, user payment, gateway, config), build it as the gateway's signer (accounts in
 * the IDL's order, the owner's token account from its user payment, the fee accounts as
 * associated token accounts of the recipient, the gateway's fee recipient and the
 * protocol's), and sign. Sending and learning what became of a signature is the one
 * sender's (infra/solana/sender.ts).
 *
 * The transaction is signed before it is sent and its bytes are kept by the caller: the
 * same bytes sent twice are one signature, which the chain lands at most once.
 */
import BN from 'bn.js';
import bs58 from 'bs58';
import { ComputeBudgetProgram, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { readProgramAccount, type AccountRead } from '../../infra/solana/accounts.js';
import { programInstruction } from '../../infra/solana/instructions.js';
import type { RpcClient } from '../../infra/solana/rpc-client.js';
import type { Commitment } from '../../infra/solana/chain-reader.js';
import type { EventData } from '../../src/kernel/events/codec.js';
import { createPdaDeriver, type PdaDeriver } from '../../src/kernel/domain/pda.js';
import { associatedTokenAddress, TOKEN_PROGRAM } from '../../src/kernel/domain/spl-token.js';
import { signDetached } from '../../infra/crypto/ed25519.js';
import { failure, type Failure } from './failure.js';
import type { Absences } from '../settlement/absence.js';


export interface ChainIo {
  rpc: RpcClient;
  programId: string;
  pdas: PdaDeriver;
  commitment: Commitment;
}

export function chainIo(rpc: RpcClient, programId: string, commitment: Commitment): ChainIo {
  return { rpc, programId, pdas: createPdaDeriver(programId), commitment };
}

type Found = AccountRead & { kind: 'found' };

export interface ExecutionContext {
  policy: Found;
  userPayment: Found;
  gateway: Found;
  config: Found;
}

const str = (d: EventData, k: string): string => text(d, k);

/** The four accounts of an execution, or the failure that makes it pointless (a deleted policy). */
export async function readExecutionContext(io: ChainIo, policyAddress: string): Promise<ExecutionContext | Failure> {
  const opts = { programId: io.programId, commitment: io.commitment };
  const policy = await readProgramAccount(io.rpc, policyAddress, 'PaymentPolicy', opts);
  if (policy.kind !== 'found') return failure('PolicyNotFound', `no payment policy at ${policyAddress} (deleted)`);
  const [userPayment, gateway, config] = await Promise.all([
    readProgramAccount(io.rpc, str(policy.data, 'user_payment'), 'UserPayment', opts),
    readProgramAccount(io.rpc, str(policy.data, 'gateway'), 'PaymentGateway', opts),
    readProgramAccount(io.rpc, io.pdas.config(), 'ProgramConfig', opts),
  ]);
  if (userPayment.kind !== 'found') return failure('PolicyNotFound', `the policy's user payment ${userPayment.address} is gone`);
  if (gateway.kind !== 'found') return failure('PolicyNotFound', `the policy's gateway ${gateway.address} is gone`);
  if (config.kind !== 'found') return failure('failed', 'the program config account is missing');
  return { policy, userPayment, gateway, config };
}

/**
 * A read of the policy's accounts that answered one of them missing (PolicyNotFound: the policy,
 * its user payment or its gateway) before a read the confirmation window later said the same:
 * not acted on (absence.ts); undefined for any other read, which ends the policy's sighting.
 */
export function unconfirmedAbsence(absences: Absences, policy: string, read: ExecutionContext | Failure): Failure | undefined {
  if (!('class' in read) || read.code !== 'PolicyNotFound') {
    absences.found(policy);
    return undefined;
  }
  return absences.missing(policy) ? undefined : read;
}

const COMPUTE_UNITS = 200_000;

export interface SignedExecution { signature: string; blockhash: string; wire: string }

/** execute_payment for the context's policy, signed by `signer`; `amount` for pay-as-you-go. */
export function signExecution(io: ChainIo, c: ExecutionContext, signer: Keypair, blockhash: string, amount: bigint | null): SignedExecution {
  const mint = str(c.userPayment.data, 'token_mint');
  const accounts: Record<string, string> = {
    fee_payer: signer.publicKey.toBase58(),
    payments_delegate: PublicKey.findProgramAddressSync([Buffer.from('payments')], new PublicKey(io.programId))[0].toBase58(),
    payment_policy: c.policy.address,
    user_payment: c.userPayment.address,
    gateway: c.gateway.address,
    config: c.config.address,
    user_token_account: str(c.userPayment.data, 'token_account'),
    mint,
    recipient_token_account: associatedTokenAddress(str(c.policy.data, 'recipient'), mint),
    gateway_fee_account: associatedTokenAddress(str(c.gateway.data, 'fee_recipient'), mint),
    protocol_fee_account: associatedTokenAddress(str(c.config.data, 'fee_recipient'), mint),
    token_program: TOKEN_PROGRAM,
  };
  const tx = new Transaction({ feePayer: signer.publicKey, recentBlockhash: blockhash });
  // Two charges of one amount under one blockhash would be the same bytes, and the chain
  // lands a signature once: the payment count (distinct for every payment of the policy)
  // goes into the compute limit so each payment's transaction is its own.
  tx.add(ComputeBudgetProgram.setComputeUnitLimit({ units: COMPUTE_UNITS + (Number(c.policy.data['payment_count']) % 100_000) }));
  tx.add(programInstruction(io.programId, 'execute_payment', accounts, { payment_amount: amount === null ? null : new BN(amount.toString()) }));
  // Node's ed25519 (OpenSSL) rather than web3.js's pure-JS signer: an order of magnitude
  // less CPU, which bounds how many executions a scheduler process sends a second
  const signature = Buffer.from(signDetached(tx.serializeMessage(), signer.secretKey));
  tx.addSignature(signer.publicKey, signature);
  return { signature: bs58.encode(signature), blockhash, wire: tx.serialize().toString('base64') };
}

export async function latestBlockhash(io: ChainIo): Promise<string> {
  const r = await io.rpc.call<{ value: { blockhash: string } }>('getLatestBlockhash', [{ commitment: io.commitment }]);
  return r.value.blockhash;
}

export async function solBalance(io: ChainIo, address: string): Promise<number> {
  const r = await io.rpc.call<{ value: number }>('getBalance', [address, { commitment: io.commitment }]);
  return r.value;
}
