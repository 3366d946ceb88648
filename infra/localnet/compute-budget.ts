/**
 * The Compute Budget program's instructions as the runtime reads them before executing a
 * transaction: a unit limit (default 200,000 per instruction outside this program, at
 * most 1,400,000), a unit price in micro-lamports, and the fee they make: 5,000 lamports
 * per signature plus the priority fee, price × limit / 1,000,000 rounded up. An
 * instruction it cannot read, or one of a kind given twice, fails the transaction before
 * it runs, as on Solana.
 */
import type { VersionedMessage } from '@solana/web3.js';
import { COMPUTE_BUDGET_PROGRAM_ID, COMPUTE_UNIT_LIMIT, LAMPORTS_PER_SIGNATURE, MAX_COMPUTE_UNIT_LIMIT } from './constants.js';
import { keyString } from './keys.js';
import type { TransactionError } from './executor.js';

export interface ComputeBudget {
  /** compute units the transaction may consume */
  unitLimit: number;
  /** micro-lamports per compute unit */
  unitPrice: bigint;
}

const BUDGET = COMPUTE_BUDGET_PROGRAM_ID.toBase58();
/** instruction tag -> its data length: RequestHeapFrame, SetComputeUnitLimit, SetComputeUnitPrice, SetLoadedAccountsDataSizeLimit */
const LENGTHS: Readonly<Record<number, number>> = { 1: 5, 2: 5, 3: 9, 4: 5 };

export function readComputeBudget(message: VersionedMessage): { budget: ComputeBudget } | { err: TransactionError } {
  const keys = message.staticAccountKeys;
  const seen = new Set<number>();
  let limit: number | undefined;
  let price = 0n;
  let others = 0;
  for (const [i, ix] of message.compiledInstructions.entries()) {
    const program = keys[ix.programIdIndex];
    if (!program || keyString(program) !== BUDGET) {
      others += 1;
      continue;
    }
    const data = Buffer.from(ix.data);
    const tag = data[0];
    if (tag === undefined || LENGTHS[tag] !== data.length) return { err: { InstructionError: [i, 'InvalidInstructionData'] } };
    if (seen.has(tag)) return { err: { DuplicateInstruction: i } };
    seen.add(tag);
    if (tag === 2) limit = data.readUInt32LE(1);
    if (tag === 3) price = data.readBigUInt64LE(1);
  }
  const unitLimit = Math.min(limit ?? others * COMPUTE_UNIT_LIMIT, MAX_COMPUTE_UNIT_LIMIT);
  return { budget: { unitLimit, unitPrice: price } };
}

/** Lamports the fee payer pays for a transaction, landed or failed. */
export function transactionFee(message: VersionedMessage, budget: ComputeBudget): number {
  const priority = (budget.unitPrice * BigInt(budget.unitLimit) + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * message.header.numRequiredSignatures + Number(priority);
}
