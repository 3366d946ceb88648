/**
 * `tributary keys rotate`: the admin route's rotation from the shell, for operators with
 * database access. Prints the same JSON as POST /v1/admin/keys/rotate; running API nodes
 * follow through Redis pub/sub.
 *
 * `tributary keys seal`: seals under SIGNING_KEY_ENCRYPTION_KEY every secret (JWT signing
 * keys, scheduler signer secrets, webhook secrets, exact fee payer keys) a development run
 * kept in plaintext or that opens only under a key of SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS,
 * and prints per kind how many it sealed from plaintext, how many it re-sealed from a
 * previous key, and how many are left in plaintext, under a previous key, or open under no
 * key. Safe beside running nodes (each row is sealed once, by whoever comes first; a row
 * changed meanwhile is left alone). Refuses without a key. Registered in
 * src/app/cli/extra-commands.ts as `keys`.
 */
import type { ExtraCommand } from './command.js';
import { closeContext } from '../build-context.js';
import { contextFor, loadConfigOrExit } from './process.js';
import { rotateKeys } from '../../../infra/signing-keys/rotate.js';
import { NoEncryptionKeyError, sealSecrets, type SealSummary } from '../secrets.js';

const SUBCOMMANDS = ['rotate', 'seal'];

export const keysCommand: ExtraCommand = {
  usage: 'keys rotate|seal',
  summary: 'rotate the JWT signing key (the old key stays in the JWKS for KEY_GRACE_PERIOD_SECONDS), or seal under SIGNING_KEY_ENCRYPTION_KEY every secret kept in plaintext or under a key of SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS',
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
        const kinds = await sealSecrets(ctx);
        process.stdout.write(`${JSON.stringify({ message: sealMessage(kinds), kinds }, null, 2)}\n`);
        return;
      }
      const r = await rotateKeys(ctx);
      process.stdout.write(`${JSON.stringify({ message: r.message, newKid: r.newKid, oldKid: r.oldKid, gracePeriodEndsAt: r.gracePeriodEndsAt.toISOString() }, null, 2)}\n`);
    } finally {
      await closeContext(ctx);
    }
  },
};

function sealMessage(kinds: readonly SealSummary[]): string {
  const sum = (field: keyof Omit<SealSummary, 'kind' | 'table' | 'column'>) => kinds.reduce((n, k) => n + k[field], 0);
  return `${sum('sealed')} plaintext secrets sealed, ${sum('resealed')} re-sealed from a previous key; `
    + `${sum('plaintextLeft')} left in plaintext, ${sum('underPreviousKey')} still under a previous key, `
    + `${sum('unopened')} in use and ${sum('unopenedNotInUse')} no longer in use open under no key`;
}
