/** Loading program accounts inside a handler, with the errors Anchor raises for them. */
import { PublicKey } from '@solana/web3.js';
import { SYSTEM_PROGRAM_ID } from '../constants.js';
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

/** A key the program refuses when it is Pubkey::default(), as its `!= Pubkey::default()` constraints do. */
export function nonDefault(key: PublicKey, error = 'InvalidAmount'): PublicKey {
  if (key.equals(PublicKey.default)) throw programError(error);
  return key;
}

/**
 * Where a closed account's rent goes (shared/account_close.rs): to the owner when the
 * stored rent payer is the default key (accounts older than the field), else to the
 * passed `rent_payer`, which must be that payer and a system account.
 */
export function rentDestination(ctx: IxContext, stored: PublicKey, ownerName = 'owner'): PublicKey {
  if (stored.equals(PublicKey.default)) return ctx.account(ownerName);
  const passed = ctx.account('rent_payer');
  requireKey(passed, stored, 'InvalidRentPayer');
  const held = ctx.view.get(passed.toBase58());
  if (held && held.owner !== SYSTEM_PROGRAM_ID.toBase58()) throw programError('InvalidRentPayer');
  return passed;
}

export function requireKey(actual: PublicKey, expected: PublicKey, error = 'Unauthorized'): void {
  if (!actual.equals(expected)) throw programError(error);
}
