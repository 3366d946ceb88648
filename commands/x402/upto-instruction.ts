/** A Tributary instruction from the vendored IDL: accounts by name in the IDL's order, args borsh-encoded. */
import { BorshCoder } from '@coral-xyz/anchor';
import { PublicKey, TransactionInstruction, type AccountMeta } from '@solana/web3.js';
import { idl } from '../../src/kernel/idl/index.js';

const coder = new BorshCoder(idl);
interface IdlIxAccount { name: string; signer?: boolean; writable?: boolean; address?: string }
const ixAccounts = new Map<string, IdlIxAccount[]>(
  (idl.instructions as unknown as { name: string; accounts: IdlIxAccount[] }[]).map((i) => [i.name, i.accounts]),
);

export function tributaryInstruction(programId: string, name: string, accounts: Record<string, string>, args: Record<string, unknown>): TransactionInstruction {
  const keys: AccountMeta[] = (ixAccounts.get(name) ?? []).map((a) => {
    const address = accounts[a.name] ?? a.address;
    if (!address) throw new Error(`${name}: account ${a.name} missing`);
    return { pubkey: new PublicKey(address), isSigner: a.signer ?? false, isWritable: a.writable ?? false };
  });
  return new TransactionInstruction({ programId: new PublicKey(programId), keys, data: coder.instruction.encode(name, args) });
}
