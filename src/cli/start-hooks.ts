/** Things `tributary start` brings up before the roles (the localnet); each returns its stop. */
import type { AppContext } from '../app/context.js';

export type StartHook = (ctx: AppContext) => Promise<() => Promise<void>>;

export const START_HOOKS: readonly StartHook[] = [];
