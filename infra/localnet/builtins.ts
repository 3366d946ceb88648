/**
 * The programs besides Tributary a transaction may call: System transfers, the Compute
 * Budget program (read before execution, a no-op when run), SPL Token and Token-2022,
 * the Associated Token Account program, SPL Memo (v2 and v1), and the noise program that
 * logs `Program data:` at top level. Each returns the compute units it consumed (close to
 * what a real node reports for the same instruction) or the error it failed with, and
 * pushes its log lines; the executor frames them.
 */
import type { AccountMeta } from '@solana/web3.js';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID, COMPUTE_BUDGET_PROGRAM_ID, MEMO_PROGRAM_ID, MEMO_V1_PROGRAM_ID, OTHER_PROGRAM_ID, SYSTEM_PROGRAM_ID,
  TOKEN_2022_PROGRAM_ID,
} from './constants.js';
import { keyString } from './keys.js';
import type { Overlay } from './program/store.js';
import { isTokenProgram, runAssociatedTokenProgram, runTokenProgram, TokenFailure } from './token-program.js';

export type BuiltinOutcome = { units: number; error?: undefined } | { units: number; error: { Custom: number } | string };

const SYSTEM = SYSTEM_PROGRAM_ID.toBase58();
const BUDGET = COMPUTE_BUDGET_PROGRAM_ID.toBase58();
const ATA = ASSOCIATED_TOKEN_PROGRAM_ID.toBase58();
const MEMO = MEMO_PROGRAM_ID.toBase58();
const MEMO_V1 = MEMO_V1_PROGRAM_ID.toBase58();
const NOISE = OTHER_PROGRAM_ID.toBase58();

/** Token instruction tag -> compute units on SPL Token (Token-2022 spends more per instruction). */
const TOKEN_UNITS: Readonly<Record<number, number>> = { 3: 4_645, 4: 2_904, 5: 2_677, 12: 6_200, 13: 4_458 };
const TOKEN_2022_EXTRA_UNITS = 1_900;
const ATA_UNITS = 21_990;
/** SPL Memo: a base cost and per byte (its UTF-8 check and the log line) */
const memoUnits = (bytes: number): number => 1_200 + 30 * bytes;
/** the builtins written in native code (System, Compute Budget) */
const NATIVE_UNITS = 150;

/** `program`'s instruction; undefined when the localnet does not run that program. */
export function runBuiltin(view: Overlay, program: string, metas: AccountMeta[], data: Buffer, logs: string[]): BuiltinOutcome | undefined {
  if (program === BUDGET) return { units: NATIVE_UNITS };
  if (isTokenProgram(program) || program === ATA) return runToken(view, program, metas, data, logs);
  if (program === MEMO || program === MEMO_V1) return runMemo(program, metas, data, logs);
  if (program === NOISE) {
    logs.push('Program log: Instruction: Noise', `Program data: ${data.toString('base64')}`);
    return { units: NATIVE_UNITS };
  }
  if (program === SYSTEM) return systemTransfer(view, metas, data, logs);
  return undefined;
}

function runToken(view: Overlay, program: string, metas: AccountMeta[], data: Buffer, logs: string[]): BuiltinOutcome {
  const units = program === ATA ? ATA_UNITS
    : (TOKEN_UNITS[data[0] ?? -1] ?? 4_645) + (program === TOKEN_2022_PROGRAM_ID.toBase58() ? TOKEN_2022_EXTRA_UNITS : 0);
  try {
    if (program === ATA) runAssociatedTokenProgram(view, metas, data, logs);
    else runTokenProgram(view, metas, data, logs, program);
    return { units };
  } catch (err) {
    if (!(err instanceof TokenFailure)) throw err;
    if (err.logLine) logs.push(err.logLine);
    return { units, error: err.error };
  }
}

/**
 * Memo v2 fails unless every account it is given signed, and both versions fail on data
 * that is not UTF-8; a valid memo is logged as the program logs it.
 */
function runMemo(program: string, metas: AccountMeta[], data: Buffer, logs: string[]): BuiltinOutcome {
  const units = memoUnits(data.length);
  if (program === MEMO) {
    for (const m of metas) {
      if (!m.isSigner) {
        logs.push(`Program log: Signature not found for account ${keyString(m.pubkey)}`);
        return { units, error: 'MissingRequiredSignature' };
      }
      logs.push(`Program log: Signed by ${keyString(m.pubkey)}`);
    }
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    logs.push('Program log: Invalid UTF-8');
    return { units, error: 'InvalidInstructionData' };
  }
  logs.push(`Program log: Memo (len ${data.length}): ${JSON.stringify(text)}`);
  return { units };
}

function systemTransfer(view: Overlay, metas: AccountMeta[], data: Buffer, logs: string[]): BuiltinOutcome {
  if (data.length < 12 || data.readUInt32LE(0) !== 2) return { units: NATIVE_UNITS };
  const [from, to] = metas;
  const lamports = Number(data.readBigUInt64LE(4));
  const src = from && view.get(from.pubkey.toBase58());
  if (!from || !to || !from.isSigner) return { units: NATIVE_UNITS, error: 'MissingRequiredSignature' };
  if (!src || src.lamports < lamports) {
    logs.push(`Transfer: insufficient lamports ${src?.lamports ?? 0}, need ${lamports}`);
    return { units: NATIVE_UNITS, error: { Custom: 1 } };
  }
  const dst = view.get(to.pubkey.toBase58()) ?? { lamports: 0, owner: SYSTEM, executable: false, data: Buffer.alloc(0) };
  view.set(from.pubkey.toBase58(), { ...src, lamports: src.lamports - lamports });
  view.set(to.pubkey.toBase58(), { ...dst, lamports: dst.lamports + lamports });
  return { units: NATIVE_UNITS };
}
