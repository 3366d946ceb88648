import type { ParsedArgs } from './args.js';
import type { AppContext } from '../context.js';

/** A CLI command contributed by an area (start, localnet, keys, pay). */
export interface ExtraCommand {
  usage: string;
  summary: string;
  /** env: the process environment, handed in by bin.ts (configuration is read through src/kernel/config) */
  run(args: ParsedArgs, env: Readonly<Record<string, string | undefined>>): Promise<void>;
}

/** Something `tributary start` brings up before the roles (the localnet); returns its stop. */
export type StartHook = (ctx: AppContext) => Promise<() => Promise<void>>;
