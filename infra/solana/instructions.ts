/**
 * The one encoder of the Tributary program's instructions, from the vendored IDL: accounts
 * by name in the IDL's order (their signer and writable flags, and fixed addresses such as
 * the token program, from the IDL too), arguments borsh-encoded behind Anchor's 8-byte
 * discriminator. Every instruction the service builds goes through here, so a new
 * on-chain action starts from its IDL entry, not from a copy of another encoder.
 */
import { BorshCoder } from '@coral-xyz/anchor';
import { PublicKey, TransactionInstruction, type AccountMeta } from '@solana/web3.js';
import { idl } from '../../src/kernel/idl/index.js';

const coder = new BorshCoder(idl);

interface IdlIxAccount { name: string; signer?: boolean; writable?: boolean; address?: string }
const ixAccounts = new Map<string, IdlIxAccount[]>(
  (idl.instructions as unknown as { name: string; accounts: IdlIxAccount[] }[]).map((i) => [i.name, i.accounts]),
);

/** The account names of an instruction, in the IDL's order. */
export function instructionAccounts(name: string): string[] {
  return (ixAccounts.get(name) ?? []).map((a) => a.name);
}

/** The instruction `name` of the program at `programId`; an account the IDL does not fix must be given. */
export function programInstruction(programId: string, name: string, accounts: Record<string, string>, args: Record<string, unknown>): TransactionInstruction {
  const idlAccounts = ixAccounts.get(name);
  if (!idlAccounts) throw new Error(`the program has no instruction ${name}`);
  const keys: AccountMeta[] = idlAccounts.map((a) => {
    const address = accounts[a.name] ?? a.address;
    if (!address) throw new Error(`${name}: account ${a.name} missing`);
    return { pubkey: new PublicKey(address), isSigner: a.signer ?? false, isWritable: a.writable ?? false };
  });
  return new TransactionInstruction({ programId: new PublicKey(programId), keys, data: coder.instruction.encode(name, args) });
}
