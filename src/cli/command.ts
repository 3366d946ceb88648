import type { ParsedArgs } from './args.js';
import type { AppContext } from '../app/context.js';

/** A CLI command contributed by an area (start, localnet, keys, pay). */
export interface ExtraCommand { usage: string; summary: string; run(args: ParsedArgs): Promise<void> }

/** Something `tributary start` brings up before the roles (the localnet); returns its stop. */
export type StartHook = (ctx: AppContext) => Promise<() => Promise<void>>;
