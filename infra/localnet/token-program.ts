/**
 * The SPL Token program (and Token-2022, for accounts without extensions beyond an
 * ATA's ImmutableOwner) and the Associated Token Account program, as far as payments
 * need them: transfer, transfer_checked, approve, approve_checked, revoke, and ATA
 * create / create-idempotent. Checks come in the order the real programs make them, and
 * failures carry the real error numbers (TokenError::InsufficientFunds = 0x1, ...), so a
 * wallet or the service reads the same outcome as on a real cluster.
 */
import { PublicKey, type AccountMeta } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './constants.js';
import { keyString, pdas } from './keys.js';
import { rentExempt } from './program/encoding.js';
import { SPL_TOKEN_ERRORS } from '../../src/kernel/domain/program-errors.js';
import type { AccountView } from './program/store.js';
import { encodeTokenAccount, readMint, readTokenAccount, tokenAccountSize, type TokenAccount } from './spl.js';

/** What an instruction of a builtin program fails with, as the runtime reports it. */
export type BuiltinError = { Custom: number } | string;

/** spl_token::error::TokenError by name: the kernel's table, which names them for users too. */
export type TokenErrorName = keyof typeof SPL_TOKEN_ERRORS;

export class TokenFailure extends Error {
  constructor(readonly error: BuiltinError, readonly logLine?: string) {
    super(typeof error === 'string' ? error : `custom program error: 0x${error.Custom.toString(16)}`);
  }
}

const tokenError = (name: TokenErrorName): TokenFailure => {
  const { code, message } = SPL_TOKEN_ERRORS[name];
  return new TokenFailure({ Custom: code }, `Program log: Error: ${message}`);
};

const TOKEN = TOKEN_PROGRAM_ID.toBase58();
const TOKEN_2022 = TOKEN_2022_PROGRAM_ID.toBase58();

/** the token programs the localnet runs, by id */
export const isTokenProgram = (program: string): boolean => program === TOKEN || program === TOKEN_2022;

export function loadTokenAccount(view: AccountView, address: PublicKey, program = TOKEN): TokenAccount {
  const acc = view.get(keyString(address));
  if (!acc || acc.owner !== program) throw new TokenFailure(acc ? 'IncorrectProgramId' : 'InvalidAccountData');
  const parsed = readTokenAccount(acc.data);
  if (!parsed) throw new TokenFailure('UninitializedAccount');
  return parsed;
}

export function saveTokenAccount(view: AccountView, address: PublicKey, t: TokenAccount, program = TOKEN): void {
  const prior = view.get(keyString(address));
  view.set(keyString(address), {
    lamports: prior?.lamports ?? rentExempt(tokenAccountSize(program)), owner: program, executable: false,
    data: encodeTokenAccount(t, program),
  });
}

/**
 * Moves `amount` from `source` to `destination` on the authority of `authority` (the
 * owner, or the delegate within its delegated amount, which the transfer uses up).
 * `signed` says whether the authority signed (a PDA signs through invoke_signed).
 */
export function tokenTransfer(
  view: AccountView, source: PublicKey, destination: PublicKey, authority: PublicKey, amount: bigint, signed: boolean,
  expect?: { mint: PublicKey; decimals: number }, program = TOKEN,
): void {
  const src = loadTokenAccount(view, source, program);
  const dst = loadTokenAccount(view, destination, program);
  if (src.amount < amount) throw tokenError('InsufficientFunds');
  if (!src.mint.equals(dst.mint)) throw tokenError('MintMismatch');
  if (expect) {
    if (!expect.mint.equals(src.mint)) throw tokenError('MintMismatch');
    const mint = view.get(keyString(expect.mint));
    if (!mint || mint.owner !== program) throw new TokenFailure(mint ? 'IncorrectProgramId' : 'InvalidAccountData');
    if (readMint(mint.data)?.decimals !== expect.decimals) throw tokenError('MintDecimalsMismatch');
  }
  let next: TokenAccount = src;
  if (src.delegate && src.delegate.equals(authority) && !src.owner.equals(authority)) {
    if (!signed) throw new TokenFailure('MissingRequiredSignature');
    if (src.delegatedAmount < amount) throw tokenError('InsufficientFunds');
    const left = src.delegatedAmount - amount;
    next = { ...src, delegatedAmount: left, delegate: left === 0n ? null : src.delegate };
  } else {
    if (!src.owner.equals(authority)) throw tokenError('OwnerMismatch');
    if (!signed) throw new TokenFailure('MissingRequiredSignature');
  }
  if (source.equals(destination)) return;
  saveTokenAccount(view, source, { ...next, amount: next.amount - amount }, program);
  const after = loadTokenAccount(view, destination, program);
  saveTokenAccount(view, destination, { ...after, amount: after.amount + amount }, program);
}

function approve(view: AccountView, source: PublicKey, delegate: PublicKey, owner: AccountMeta, amount: bigint, program: string): void {
  const src = loadTokenAccount(view, source, program);
  if (!src.owner.equals(owner.pubkey)) throw tokenError('OwnerMismatch');
  if (!owner.isSigner) throw new TokenFailure('MissingRequiredSignature');
  saveTokenAccount(view, source, { ...src, delegate, delegatedAmount: amount }, program);
}

function revoke(view: AccountView, source: PublicKey, authority: AccountMeta, program: string): void {
  const src = loadTokenAccount(view, source, program);
  const ok = src.owner.equals(authority.pubkey) || (src.delegate?.equals(authority.pubkey) ?? false);
  if (!ok) throw tokenError('OwnerMismatch');
  if (!authority.isSigner) throw new TokenFailure('MissingRequiredSignature');
  saveTokenAccount(view, source, { ...src, delegate: null, delegatedAmount: 0n }, program);
}

const NAMES: Record<number, string> = { 3: 'Transfer', 4: 'Approve', 5: 'Revoke', 12: 'TransferChecked', 13: 'ApproveChecked' };

/** One top-level instruction of a token program (`program`: its id); pushes its `Program log:` lines. */
export function runTokenProgram(view: AccountView, metas: AccountMeta[], data: Buffer, logs: string[], program = TOKEN): void {
  const tag = data[0];
  const name = tag === undefined ? undefined : NAMES[tag];
  if (!name) throw new TokenFailure('InvalidInstructionData');
  logs.push(`Program log: Instruction: ${name}`);
  const key = (i: number): AccountMeta => {
    const m = metas[i];
    if (!m) throw new TokenFailure('NotEnoughAccountKeys');
    return m;
  };
  const amount = (): bigint => {
    if (data.length < 9) throw new TokenFailure('InvalidInstructionData');
    return data.readBigUInt64LE(1);
  };
  const decimals = (): number => {
    if (data.length < 10) throw new TokenFailure('InvalidInstructionData');
    return data.readUInt8(9);
  };
  switch (tag ?? -1) {
    case 3: return tokenTransfer(view, key(0).pubkey, key(1).pubkey, key(2).pubkey, amount(), key(2).isSigner, undefined, program);
    case 12: {
      const expect = { mint: key(1).pubkey, decimals: decimals() };
      return tokenTransfer(view, key(0).pubkey, key(2).pubkey, key(3).pubkey, amount(), key(3).isSigner, expect, program);
    }
    case 4: return approve(view, key(0).pubkey, key(1).pubkey, key(2), amount(), program);
    case 13: {
      const src = loadTokenAccount(view, key(0).pubkey, program);
      if (!src.mint.equals(key(1).pubkey)) throw tokenError('MintMismatch');
      const mint = view.get(keyString(key(1).pubkey));
      if (mint && readMint(mint.data)?.decimals !== decimals()) throw tokenError('MintDecimalsMismatch');
      return approve(view, key(0).pubkey, key(2).pubkey, key(3), amount(), program);
    }
    case 5: return revoke(view, key(0).pubkey, key(1), program);
    default: throw new TokenFailure('InvalidInstructionData');
  }
}

/**
 * The ATA program: data empty or [0] = Create, [1] = CreateIdempotent. Accounts: funder
 * (signer, pays the rent), the ATA, the wallet, the mint, the system and token programs
 * (the sixth names which token program: SPL Token or Token-2022).
 */
export function runAssociatedTokenProgram(view: AccountView, metas: AccountMeta[], data: Buffer, logs: string[]): void {
  const mode = data.length === 0 ? 0 : data[0];
  if (mode !== 0 && mode !== 1) throw new TokenFailure('InvalidInstructionData');
  logs.push(`Program log: ${mode === 1 ? 'CreateIdempotent' : 'Create'}`);
  const [funder, ata, wallet, mint, , tokenProgram] = metas;
  if (!funder || !ata || !wallet || !mint) throw new TokenFailure('NotEnoughAccountKeys');
  const program = tokenProgram ? keyString(tokenProgram.pubkey) : TOKEN;
  if (!isTokenProgram(program)) throw new TokenFailure('IncorrectProgramId');
  if (!pdas.associatedToken(wallet.pubkey, mint.pubkey, tokenProgram?.pubkey).equals(ata.pubkey)) {
    logs.push('Program log: Error: Associated address does not match seed derivation');
    throw new TokenFailure('InvalidSeeds');
  }
  const existing = view.get(keyString(ata.pubkey));
  if (existing) {
    const t = existing.owner === program ? readTokenAccount(existing.data) : undefined;
    if (mode === 1 && t && t.owner.equals(wallet.pubkey) && t.mint.equals(mint.pubkey)) return;
    if (mode === 1) throw new TokenFailure({ Custom: 0 }, 'Program log: Error: Associated token account owner does not match address derivation');
    throw new TokenFailure({ Custom: 0 }, `Allocate: account Address { address: ${keyString(ata.pubkey)}, base: None } already in use`);
  }
  const mintAcc = view.get(keyString(mint.pubkey));
  if (!mintAcc || mintAcc.owner !== program || !readMint(mintAcc.data)) throw new TokenFailure('IncorrectProgramId');
  if (!funder.isSigner) throw new TokenFailure('MissingRequiredSignature');
  const rent = rentExempt(tokenAccountSize(program));
  const payer = view.get(keyString(funder.pubkey));
  if (!payer || payer.lamports < rent) {
    logs.push(`Transfer: insufficient lamports ${payer?.lamports ?? 0}, need ${rent}`);
    throw new TokenFailure({ Custom: 1 });
  }
  view.set(keyString(funder.pubkey), { ...payer, lamports: payer.lamports - rent });
  logs.push('Program log: Initialize the associated token account');
  view.set(keyString(ata.pubkey), {
    lamports: rent, owner: program, executable: false, data: encodeTokenAccount({ mint: mint.pubkey, owner: wallet.pubkey, amount: 0n }, program),
  });
}

/** The runtime's wording of an instruction error, as in `Program X failed: ...` lines. */
export function runtimeErrorText(e: { Custom: number } | string): string {
  if (typeof e !== 'string') return `custom program error: 0x${e.Custom.toString(16)}`;
  const words: Record<string, string> = {
    MissingRequiredSignature: 'missing required signature for instruction',
    InvalidAccountData: 'invalid account data for instruction',
    InvalidInstructionData: 'invalid instruction data',
    NotEnoughAccountKeys: 'insufficient account keys for instruction',
    IncorrectProgramId: 'incorrect program id for instruction',
    InvalidSeeds: 'Provided seeds do not result in a valid address',
    UninitializedAccount: 'instruction requires an initialized account',
  };
  return words[e] ?? e;
}
