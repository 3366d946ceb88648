/**
 * Program errors by name wherever a user reads them: `ProgramPaused (6000): Program is
 * paused` rather than `custom program error: 0x1770`. Names and messages come from the
 * IDL's errors (6000+), Anchor's framework errors the program raises, and the SPL Token
 * program's errors (when the token program is the one that failed).
 */
import { idl } from '../idl/index.js';
import { TOKEN_PROGRAM } from './spl-token.js';

export interface NamedError { code: number; name: string; message: string }

type ErrorTable = Readonly<Record<string, { readonly code: number; readonly message: string }>>;

/**
 * The Anchor framework errors an instruction of the program can fail with, by name. The
 * localnet raises the same ones (infra/localnet/program/errors.ts).
 */
export const ANCHOR_ERRORS = {
  InstructionFallbackNotFound: { code: 101, message: 'Fallback functions are not supported' },
  InstructionDidNotDeserialize: { code: 102, message: 'The program could not deserialize the given instruction' },
  ConstraintHasOne: { code: 2001, message: 'A has one constraint was violated' },
  ConstraintRaw: { code: 2003, message: 'A raw constraint was violated' },
  ConstraintSeeds: { code: 2006, message: 'A seeds constraint was violated' },
  ConstraintAddress: { code: 2012, message: 'An address constraint was violated' },
  AccountDidNotDeserialize: { code: 3003, message: 'Failed to deserialize the account' },
  AccountNotEnoughKeys: { code: 3005, message: 'Not enough account keys given to the instruction' },
  AccountNotMutable: { code: 3006, message: 'The given account is not mutable' },
  AccountOwnedByWrongProgram: { code: 3007, message: 'The given account is owned by a different program than expected' },
  AccountNotSigner: { code: 3010, message: 'The given account did not sign' },
  AccountNotInitialized: { code: 3012, message: 'The program expected this account to be already initialized' },
} as const satisfies ErrorTable;

/** spl_token::error::TokenError numbers and the text the token program logs for them (the localnet's token program raises them). */
export const SPL_TOKEN_ERRORS = {
  InsufficientFunds: { code: 1, message: 'insufficient funds' },
  MintMismatch: { code: 3, message: 'Account not associated with this Mint' },
  OwnerMismatch: { code: 4, message: 'owner does not match' },
  AccountFrozen: { code: 17, message: 'Account is frozen' },
  MintDecimalsMismatch: { code: 18, message: 'decimals different from the Mint decimals' },
} as const satisfies ErrorTable;

const listOf = (table: ErrorTable): NamedError[] => Object.entries(table).map(([name, e]) => ({ name, code: e.code, message: e.message }));
const ANCHOR = listOf(ANCHOR_ERRORS);
const TOKEN = listOf(SPL_TOKEN_ERRORS);


const PROGRAM: readonly NamedError[] = [
  ...(idl.errors ?? []).map((e) => ({ code: e.code, name: e.name, message: e.msg ?? e.name })),
  ...ANCHOR,
];

export const formatNamed = (e: NamedError): string => `${e.name} (${e.code}): ${e.message}`;

/** The program's error (IDL or Anchor framework) with this number. */
export function programErrorByCode(code: number): NamedError | undefined {
  return PROGRAM.find((e) => e.code === code);
}

export function programErrorByName(name: string): NamedError | undefined {
  return PROGRAM.find((e) => e.name === name);
}

/** Anchor's own log line names the error exactly: "AnchorError ... Error Code: X. Error Number: N. Error Message: M." */
function fromLogs(logs: readonly string[]): { named: NamedError; account?: string } | undefined {
  for (const line of logs) {
    const m = /AnchorError (?:caused by account: (\w+)|occurred)\. Error Code: (\w+)\. Error Number: (\d+)\. Error Message: (.*?)\.?$/.exec(line);
    if (m) return { named: { code: Number(m[3]), name: m[2] ?? '', message: m[4] ?? '' }, ...(m[1] ? { account: m[1] } : {}) };
  }
  return undefined;
}

/** The program that failed, from the runtime's `Program X failed: ...` log line. */
function failedProgram(logs: readonly string[]): string | undefined {
  for (const line of logs) {
    const m = /^Program (\w+) failed: /.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * A transaction error as a person reads it: `InsufficientBalance (6007): Insufficient
 * balance for payment (instruction 3)`. `err` is the runtime's TransactionError
 * (`{ InstructionError: [i, { Custom: n }] }` or a string); `logs` the transaction's logs
 * when known (they name the failing program and Anchor's account).
 */
export function describeTransactionError(err: unknown, logs: readonly string[] = []): string {
  const ie = (err as { InstructionError?: [number, unknown] } | null)?.InstructionError;
  const where = ie ? ` (instruction ${ie[0]})` : '';
  const anchor = fromLogs(logs);
  if (anchor) return `${formatNamed(anchor.named)}${anchor.account ? `, account ${anchor.account}` : ''}${where}`;
  if (!ie) return typeof err === 'string' ? err : JSON.stringify(err);
  const detail = ie[1];
  const custom = (detail as { Custom?: unknown } | null)?.Custom;
  if (typeof custom !== 'number') return `${typeof detail === 'string' ? detail : JSON.stringify(detail)}${where}`;
  const program = failedProgram(logs);
  const named = program === TOKEN_PROGRAM ? TOKEN.find((e) => e.code === custom) : program === undefined && custom < 100 ? undefined : programErrorByCode(custom);
  return named ? `${formatNamed(named)}${where}` : `custom program error: 0x${custom.toString(16)}${where}`;
}

/** `custom program error: 0x1770` inside a text becomes the error's name (an RPC error message without logs). */
export function nameCustomErrors(text: string): string {
  return text.replace(/custom program error: 0x([0-9a-f]+)/gi, (whole, hex: string) => {
    const named = programErrorByCode(parseInt(hex, 16));
    return named ? `${formatNamed(named)} (${whole})` : whole;
  });
}

/**
 * Whether a refusal is the program's emergency pause: ProgramPaused on the creating
 * instructions, or execute_payment's raw constraint on the config account. The pause is
 * short on the localnet (and rare anywhere): a client may wait it out and try again.
 */
export function isPauseRefusal(reason: string | undefined): boolean {
  return reason !== undefined && (/ProgramPaused \(6000\)/.test(reason) || /ConstraintRaw \(2003\)[^,]*, account config\b/.test(reason));
}
