/**
 * What an instruction handler sees, and the account constraints that Anchor checks
 * before a handler runs, read from the IDL itself (signer, writable, fixed address and
 * PDA seeds, including seeds taken from another account's fields or from an argument).
 */
import { PublicKey, type AccountMeta } from '@solana/web3.js';
import { idl } from '../../../src/kernel/idl/index.js';
import { findPda, u32le } from '../keys.js';
import { frameworkError } from './errors.js';
import type { AccountKind } from './model.js';
import { readProgramAccount, type Overlay } from './store.js';

export interface ProgramClock {
  /** the Clock sysvar: unix seconds of the block */
  now: number;
  /**
   * The workload's accelerated schedule clock: payments fall due by it, so that a month of
   * subscription payments plays out in seconds. Equal to `now` for client transactions.
   */
  scheduleNow: number;
}

/**
 * `observed`: what an indexer reading the transaction adds to the event's data from the
 * program's log (PaymentRecord's fee_split), so the ledger states what it should produce.
 */
export interface EmittedEvent { name: string; data: unknown; observed?: Record<string, unknown> }

export interface IxContext {
  ixName: string;
  args: Record<string, unknown>;
  view: Overlay;
  clock: ProgramClock;
  account(name: string): PublicKey;
  isSigner(name: string): boolean;
  /** accounts past the IDL's list (Anchor's remaining_accounts) */
  remaining: AccountMeta[];
  emit(name: string, data: unknown, observed?: Record<string, unknown>): void;
  log(message: string): void;
  /** a log line as it stands (the frames of a CPI into another program) */
  logRaw(line: string): void;
}

interface IdlSeed { kind: 'const' | 'account' | 'arg'; value?: number[]; path?: string; account?: string }
export interface IdlIxAccount {
  name: string; signer?: boolean; writable?: boolean; address?: string;
  pda?: { seeds: IdlSeed[] };
}
export interface IdlInstruction {
  name: string; discriminator: number[]; accounts: IdlIxAccount[];
  args: { name: string; type: unknown }[];
}

export const idlInstructions = idl.instructions as unknown as IdlInstruction[];

export function createContext(
  ix: IdlInstruction, args: Record<string, unknown>, keys: AccountMeta[], view: Overlay, clock: ProgramClock,
  sink: { events: EmittedEvent[]; logs: string[] },
): IxContext {
  if (keys.length < ix.accounts.length) throw frameworkError('AccountNotEnoughKeys');
  const index = new Map(ix.accounts.map((a, i) => [a.name, i]));
  const meta = (name: string): AccountMeta => {
    const i = index.get(name);
    const m = i === undefined ? undefined : keys[i];
    if (!m) throw new Error(`instruction ${ix.name} has no account ${name}`);
    return m;
  };
  return {
    ixName: ix.name,
    args,
    view,
    clock,
    account: (name) => meta(name).pubkey,
    isSigner: (name) => meta(name).isSigner,
    remaining: keys.slice(ix.accounts.length),
    emit: (name, data, observed) => void sink.events.push({ name, data, ...(observed ? { observed } : {}) }),
    log: (message) => void sink.logs.push(`Program log: ${message}`),
    logRaw: (line) => void sink.logs.push(line),
  };
}

const ACCOUNT_KINDS = new Set<string>(['ProgramConfig', 'PaymentGateway', 'UserPayment', 'PaymentPolicy', 'ComposablePolicy']);

function seedBytes(ix: IdlInstruction, ctx: IxContext, seed: IdlSeed): Buffer {
  if (seed.kind === 'const') return Buffer.from(seed.value ?? []);
  const path = seed.path ?? '';
  if (seed.kind === 'arg') {
    const v = ctx.args[path];
    return typeof v === 'number' ? u32le(v) : Buffer.from(v as number[]);
  }
  const [accountName = '', field] = path.split('.');
  if (!field) return ctx.account(accountName).toBuffer();
  const kind = seed.account ?? '';
  if (!ACCOUNT_KINDS.has(kind)) throw new Error(`unsupported seed account ${kind} in ${ix.name}`);
  const loaded = readProgramAccount(ctx.view, ctx.account(accountName), kind as AccountKind) as
    Record<string, unknown> | undefined;
  if (!loaded) throw frameworkError('AccountNotInitialized', accountName);
  const v = loaded[field];
  return v instanceof PublicKey ? v.toBuffer() : u32le(v as number);
}

/** Anchor's generated checks, in account order. */
export function checkConstraints(ix: IdlInstruction, ctx: IxContext, keys: AccountMeta[]): void {
  ix.accounts.forEach((a, i) => {
    const m = keys[i];
    if (!m) throw frameworkError('AccountNotEnoughKeys');
    if (a.signer && !m.isSigner) throw frameworkError('AccountNotSigner', a.name);
    if (a.writable && !m.isWritable) throw frameworkError('AccountNotMutable', a.name);
    if (a.address && m.pubkey.toBase58() !== a.address) throw frameworkError('ConstraintAddress', a.name);
    if (a.pda) {
      const expected = findPda(a.pda.seeds.map((s) => seedBytes(ix, ctx, s)));
      if (!expected.equals(m.pubkey)) throw frameworkError('ConstraintSeeds', a.name);
    }
  });
}
