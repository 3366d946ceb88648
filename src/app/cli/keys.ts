/**
 * `tributary keys rotate`: the admin route's rotation from the shell, for operators with
 * database access. Prints the same JSON as POST /v1/admin/keys/rotate; running API nodes
 * follow through Redis pub/sub. Registered in src/app/cli/extra-commands.ts as `keys`.
 */
import type { ExtraCommand } from './command.js';
import { closeContext } from '../build-context.js';
import { contextFor, loadConfigOrExit } from './process.js';
import { rotateKeys } from '../../../infra/signing-keys/rotate.js';

export const keysCommand: ExtraCommand = {
  usage: 'keys rotate',
  summary: 'rotate the JWT signing key (the old key stays in the JWKS for KEY_GRACE_PERIOD_SECONDS)',
  async run(args) {
    const sub = args.positionals[1];
    if (sub !== 'rotate') throw new Error(`keys: unknown subcommand '${sub ?? ''}' (expected: keys rotate)`);
    const ctx = contextFor(loadConfigOrExit(process.env), 'keys');
    try {
      const r = await rotateKeys(ctx);
      process.stdout.write(`${JSON.stringify({ message: r.message, newKid: r.newKid, oldKid: r.oldKid, gracePeriodEndsAt: r.gracePeriodEndsAt.toISOString() }, null, 2)}\n`);
    } finally {
      await closeContext(ctx);
    }
  },
};
