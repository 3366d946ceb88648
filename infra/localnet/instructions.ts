/**
 * Client-side instruction building from the IDL: accounts in the IDL's order with its
 * signer/writable flags, fixed addresses filled in, data = Anchor's 8-byte discriminator
 * ++ borsh(args) through BorshCoder. The workload uses it, and tests build the same
 * transactions a wallet would send.
 */
import { ComputeBudgetProgram, PublicKey, TransactionInstruction, type AccountMeta } from '@solana/web3.js';
import { PROGRAM_ID } from './constants.js';
import { pdas } from './keys.js';
import { idlInstructions } from './program/context.js';
import { coder } from './program/encoding.js';

const fixedAddresses = new Map<string, PublicKey>();
const fixedAddress = (a: string): PublicKey => {
  let k = fixedAddresses.get(a);
  if (!k) fixedAddresses.set(a, (k = new PublicKey(a)));
  return k;
};

export interface IxOptions {
  remaining?: AccountMeta[];
  /** append the event authority and the program, as #[event_cpi] instructions carry them */
  eventCpi?: boolean;
  /** extra read-only accounts (the workload adds a decoy program to some) */
  extra?: PublicKey[];
}

export function tributaryIx(
  name: string, accounts: Record<string, PublicKey>, args: Record<string, unknown> = {}, opts: IxOptions = {},
): TransactionInstruction {
  const ix = idlInstructions.find((i) => i.name === name);
  if (!ix) throw new Error(`IDL has no instruction ${name}`);
  const keys: AccountMeta[] = ix.accounts.map((a) => {
    const pubkey = accounts[a.name] ?? (a.address ? fixedAddress(a.address) : undefined);
    if (!pubkey) throw new Error(`${name}: account ${a.name} missing`);
    return { pubkey, isSigner: a.signer ?? false, isWritable: a.writable ?? false };
  });
  keys.push(...(opts.remaining ?? []));
  if (opts.eventCpi) {
    keys.push({ pubkey: pdas.eventAuthority(), isSigner: false, isWritable: false });
    keys.push({ pubkey: PROGRAM_ID, isSigner: false, isWritable: false });
  }
  for (const pubkey of opts.extra ?? []) keys.push({ pubkey, isSigner: false, isWritable: false });
  return new TransactionInstruction({ programId: PROGRAM_ID, keys, data: coder.instruction.encode(name, args) });
}

export function computeUnitLimitIx(units: number): TransactionInstruction {
  return ComputeBudgetProgram.setComputeUnitLimit({ units });
}
