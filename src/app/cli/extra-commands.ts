/**
 * Commands contributed by the areas: start, localnet, keys, pay, mcp. Each adds an entry.
 */
import type { ExtraCommand } from './command.js';
import { startCommand } from './start.js';
import { localnetCommand } from './localnet.js';
import { keysCommand } from './keys.js';
import { watchCommand } from './watch.js';
import { payCommand } from './pay.js';
import { signCommand } from './sign.js';
import { reconcileCommand } from './reconcile.js';
import { mcpCommand } from './mcp.js';

export const EXTRA_COMMANDS: Readonly<Record<string, ExtraCommand>> = {
  start: startCommand,
  localnet: localnetCommand,
  keys: keysCommand,
  watch: watchCommand,
  pay: payCommand,
  sign: signCommand,
  reconcile: reconcileCommand,
  mcp: mcpCommand,
};
