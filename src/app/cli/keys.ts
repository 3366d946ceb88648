/**
 * `tributary keys rotate`: the admin route's rotation from the shell, for operators with
 * database access. Prints the same JSON as POST /v1/admin/keys/rotate; running API nodes
 * follow through Redis pub/sub.
 *
 * `tributary keys seal`: seals every secret a development run kept in plaintext (JWT
 * signing keys, scheduler signer secrets, webhook secrets, exact fee payer keys) under
 * SIGNING_KEY_ENCRYPTION_KEY, and prints per kind how many it sealed and how many are
 * left in plaintext. Safe beside running nodes (each row is sealed once, by whoever comes
 * first). Refuses without a key. Registered in src/app/cli/extra-commands.ts as `keys`.
 */
import type { ExtraCommand } from './command.js';
import { closeContext } from '../build-context.js';
import { contextFor, loadConfigOrExit } from './process.js';
import { rotateKeys } from '../../../infra/signing-keys/rotate.js';
import { NoEncryptionKeyError, sealPlaintextSecrets } from '../secrets.js';

const SUBCOMMANDS = ['rotate', 'seal'];

export const keysCommand: ExtraCommand = {
  usage: 'keys rotate|seal',
  summary: 'rotate the JWT signing key (the old key stays in the JWKS for KEY_GRACE_PERIOD_SECONDS), or seal every secret kept in plaintext under SIGNING_KEY_ENCRYPTION_KEY',
  async run(args) {
    const sub = args.positionals[1];
    if (sub === undefined || !SUBCOMMANDS.includes(sub)) {
      throw new Error(`keys: unknown subcommand '${sub ?? ''}' (expected: keys rotate, keys seal)`);
    }
    const config = loadConfigOrExit(process.env);
    if (sub === 'seal' && !config.keys.encryptionKey) throw new Error(`keys seal: ${new NoEncryptionKeyError().message}`);
    const ctx = contextFor(config, 'keys');
    try {
      if (sub === 'seal') {
        const kinds = await sealPlaintextSecrets(ctx);
        const sealed = kinds.reduce((n, k) => n + k.sealed, 0);
        const left = kinds.reduce((n, k) => n + k.plaintextLeft, 0);
        process.stdout.write(`${JSON.stringify({ message: `${sealed} plaintext secrets sealed, ${left} left in plaintext`, kinds }, null, 2)}\n`);
        return;
      }
      const r = await rotateKeys(ctx);
      process.stdout.write(`${JSON.stringify({ message: r.message, newKid: r.newKid, oldKid: r.oldKid, gracePeriodEndsAt: r.gracePeriodEndsAt.toISOString() }, null, 2)}\n`);
    } finally {
      await closeContext(ctx);
    }
  },
};
