/**
 * Program errors as the real program reports them: Anchor's framework errors and the
 * IDL's custom errors (6000+), each rendered as Anchor logs it before the runtime's
 * `custom program error: 0x..` line.
 */
import { idl } from '../../../src/kernel/idl/index.js';

export class ProgramError extends Error {
  constructor(
    readonly code: number,
    readonly errorName: string,
    readonly errorMessage: string,
    /** the account a constraint failed on, as Anchor names it in its log */
    readonly account?: string,
  ) {
    super(`${errorName}: ${errorMessage}`);
  }

  /** The instruction error the runtime reports for this failure. */
  runtimeError(): { Custom: number } | string {
    return { Custom: this.code };
  }

  /** The runtime's `Program X failed: ...` wording. */
  runtimeText(): string {
    return `custom program error: 0x${this.code.toString(16)}`;
  }

  /** The `Program log:` text Anchor prints for this error. */
  logLine(): string {
    const where = this.account ? `caused by account: ${this.account}.` : 'occurred.';
    return `AnchorError ${where} Error Code: ${this.errorName}. Error Number: ${this.code}. Error Message: ${this.errorMessage}.`;
  }
}

/** The subset of Anchor's framework errors that the emulated constraints can raise. */
const FRAMEWORK = {
  InstructionFallbackNotFound: [101, 'Fallback functions are not supported'],
  InstructionDidNotDeserialize: [102, 'The program could not deserialize the given instruction'],
  ConstraintHasOne: [2001, 'A has one constraint was violated'],
  ConstraintRaw: [2003, 'A raw constraint was violated'],
  AccountDidNotDeserialize: [3003, 'Failed to deserialize the account'],
  ConstraintSeeds: [2006, 'A seeds constraint was violated'],
  ConstraintAddress: [2012, 'An address constraint was violated'],
  AccountNotEnoughKeys: [3005, 'Not enough account keys given to the instruction'],
  AccountNotMutable: [3006, 'The given account is not mutable'],
  AccountOwnedByWrongProgram: [3007, 'The given account is owned by a different program than expected'],
  AccountNotSigner: [3010, 'The given account did not sign'],
  AccountNotInitialized: [3012, 'The program expected this account to be already initialized'],
} as const;

export type FrameworkErrorName = keyof typeof FRAMEWORK;

export function frameworkError(name: FrameworkErrorName, account?: string): ProgramError {
  const [code, msg] = FRAMEWORK[name];
  return new ProgramError(code, name, msg, account);
}

const custom = new Map((idl.errors ?? []).map((e) => [e.name, e]));

/** A custom error of the IDL by name (ProgramPaused, Unauthorized, ...). */
export function programError(name: string, account?: string): ProgramError {
  const e = custom.get(name);
  if (!e) throw new Error(`IDL has no error ${name}`);
  return new ProgramError(e.code, e.name, e.msg ?? e.name, account);
}

/**
 * `init` on an account that exists fails inside the System Program's Allocate with
 * custom error 0; the real program surfaces exactly that.
 */
export class AccountInUseError extends ProgramError {
  constructor(readonly address: string) {
    super(0, 'AccountInUse', `account ${address} already in use`);
  }

  override logLine(): string {
    return `Allocate: account Address { address: ${this.address}, base: None } already in use`;
  }
}

/**
 * A CPI into the token program that failed: the whole instruction fails with the token
 * program's own error (the program does not wrap it), and Anchor logs nothing of its own.
 */
export class CpiError extends ProgramError {
  constructor(readonly error: { Custom: number } | string, readonly text: string, readonly tokenLog?: string) {
    super(typeof error === 'string' ? 0 : error.Custom, 'TokenProgramError', text);
  }

  override runtimeError(): { Custom: number } | string {
    return this.error;
  }

  override runtimeText(): string {
    return this.text;
  }

  override logLine(): string {
    return this.tokenLog?.replace(/^Program log: /, '') ?? this.text;
  }
}
