/**
 * `tributary start`, the main job: migrate, start the localnet when no SOLANA_RPC_URL is
 * set, then every role in this one process. `make cluster` runs them as separate ones.
 */
import type { ExtraCommand, StartHook } from './command.js';
import { contextFor, loadConfigOrExit, runUntilSignalled } from './process.js';
import { migrate } from './commands.js';
import { ROLES } from '../roles/registry.js';
import { localnetStartHook } from './localnet.js';

const START_HOOKS: readonly StartHook[] = [localnetStartHook];

/** Roles in start order: consumers before producers, the API last. */
const START_ORDER = ['projector', 'webhooks', 'notifier', 'indexer', 'scheduler', 'api'];

export const startCommand: ExtraCommand = {
  usage: 'start',
  summary: 'migrate, then run the localnet (unless SOLANA_RPC_URL) and every role in one process',
  async run() {
    const config = loadConfigOrExit(process.env);
    await migrate(config, (s) => process.stdout.write(`${s}\n`));
    const ctx = contextFor(config, 'start');
    const stops: (() => Promise<void>)[] = [];
    for (const hook of START_HOOKS) stops.push(await hook(ctx));
    await runUntilSignalled(ctx, async () => {
      const started = [];
      for (const name of START_ORDER) {
        const role = ROLES[name];
        if (role) started.push(await role(ctx));
      }
      return started;
    }, stops);
  },
};
