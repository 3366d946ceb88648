import type { ParsedArgs } from './args.js';

/** A CLI command contributed by an area (start, localnet, keys, pay). */
export interface ExtraCommand { usage: string; summary: string; run(args: ParsedArgs): Promise<void> }
