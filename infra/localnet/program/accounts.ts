/** Loading program accounts inside a handler, with the errors Anchor raises for them. */
import type { PublicKey } from '@solana/web3.js';
import type { IxContext } from './context.js';
import { AccountInUseError, frameworkError, programError } from './errors.js';
import type { AccountKind, AccountTypes, ProgramConfig } from './model.js';
import { readProgramAccount } from './store.js';

export function load<K extends AccountKind>(ctx: IxContext, name: string, kind: K): AccountTypes[K] {
  const value = readProgramAccount(ctx.view, ctx.account(name), kind);
  if (!value) throw frameworkError('AccountNotInitialized', name);
  return value;
}

export function mustBeFree(ctx: IxContext, address: PublicKey): void {
  if (ctx.view.get(address.toBase58())) throw new AccountInUseError(address.toBase58());
}

/** The config, failing with ProgramPaused while the emergency pause is on. */
export function liveConfig(ctx: IxContext): ProgramConfig {
  const config = load(ctx, 'config', 'ProgramConfig');
  if (config.emergency_pause) throw programError('ProgramPaused');
  return config;
}

export function requireKey(actual: PublicKey, expected: PublicKey, error = 'Unauthorized'): void {
  if (!actual.equals(expected)) throw programError(error);
}
