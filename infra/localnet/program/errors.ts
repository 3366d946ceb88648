/**
 * Program errors as the real program reports them: Anchor's framework errors and the
 * IDL's custom errors (6000+), each rendered as Anchor logs it before the runtime's
 * `custom program error: 0x..` line.
 */
import { ANCHOR_ERRORS, programErrorByName } from '../../../src/kernel/domain/program-errors.js';

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

/** Anchor's framework errors the emulated constraints can raise: the kernel's table, which names them for users too. */
export type FrameworkErrorName = keyof typeof ANCHOR_ERRORS;

export function frameworkError(name: FrameworkErrorName, account?: string): ProgramError {
  const { code, message } = ANCHOR_ERRORS[name];
  return new ProgramError(code, name, message, account);
}

/** A custom error of the IDL by name (ProgramPaused, Unauthorized, ...). */
export function programError(name: string, account?: string): ProgramError {
  const e = programErrorByName(name);
  if (!e || e.code < 6000) throw new Error(`IDL has no error ${name}`);
  return new ProgramError(e.code, e.name, e.message, account);
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
