/**
 * The sealed secrets a process opens, at start and for /v1/health.
 *
 * With SIGNING_KEY_ENCRYPTION_KEY set, a process first seals every secret a development
 * run kept in the clear (`plain:`), each sealing logged; then it tries to open every
 * secret its roles will need and logs at error level each one that does not open (its kind
 * and row, never the secret). Neither stops the process: a gateway whose key does not
 * open stops that gateway only. An API node's health answers `degraded` with the reasons.
 */
import type { AppContext } from './context.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';
import { countPlain, sealPlainColumn, unopenedSecrets, type SecretColumn, type UnopenedSecret } from '../../infra/secrets/columns.js';
import { SIGNING_KEY_SECRETS } from '../../infra/signing-keys/store.js';
import { SCHEDULER_SIGNER_SECRETS } from '../../commands/scheduler/signers.js';
import { WEBHOOK_PREVIOUS_SECRETS, WEBHOOK_SECRETS } from '../../commands/webhooks/store.js';
import { FEE_PAYER_SECRETS } from '../../commands/x402/exact/fee-payers.js';

/** Every sealed secret column of the service. */
export const SECRET_COLUMNS: readonly SecretColumn[] = [
  SIGNING_KEY_SECRETS, SCHEDULER_SIGNER_SECRETS, WEBHOOK_SECRETS, WEBHOOK_PREVIOUS_SECRETS, FEE_PAYER_SECRETS,
];

/** The secrets each role opens: the API signs tokens, sends webhook tests and co-signs exact payments. */
export const ROLE_SECRETS = {
  api: [SIGNING_KEY_SECRETS, WEBHOOK_SECRETS, WEBHOOK_PREVIOUS_SECRETS, FEE_PAYER_SECRETS],
  webhooks: [WEBHOOK_SECRETS, WEBHOOK_PREVIOUS_SECRETS],
  scheduler: [SCHEDULER_SIGNER_SECRETS],
} as const satisfies Record<string, readonly SecretColumn[]>;

/** How often health opens the secrets again (other than the signing key, which the key ring follows). */
export const SECRETS_RECHECK_MS = 60_000;

/** At most this many secrets that do not open are named one by one, per kind and in health. */
const NAMED = 10;

type Deps = Pick<AppContext, 'db' | 'config' | 'logger' | 'clock'>;

export interface SealSummary { kind: string; table: string; column: string; sealed: number; plaintextLeft: number }

export class NoEncryptionKeyError extends Error {
  constructor() {
    super('SIGNING_KEY_ENCRYPTION_KEY is not set: there is no key to seal secrets with (32 bytes, hex or base64)');
    this.name = 'NoEncryptionKeyError';
  }
}

/** Seals every plaintext secret of every kind under the configured key; safe with other nodes doing the same. */
export async function sealPlaintextSecrets(deps: Deps): Promise<SealSummary[]> {
  const key = deps.config.keys.encryptionKey;
  if (!key) throw new NoEncryptionKeyError();
  const out: SealSummary[] = [];
  for (const col of SECRET_COLUMNS) {
    const sealed = await sealPlainColumn(deps.db, col, key, deps.logger);
    out.push({ kind: col.kind, table: col.table, column: col.column, sealed: sealed.length, plaintextLeft: await countPlain(deps.db, col) });
  }
  return out;
}

export const describeUnopened = (u: UnopenedSecret): string => `${u.kind} ${u.id} cannot be opened: ${u.reason}`;

/** Opens every in-use secret of `columns`; those that do not open. */
export async function findUnopenedSecrets(deps: Deps, columns: readonly SecretColumn[]): Promise<UnopenedSecret[]> {
  const found: UnopenedSecret[] = [];
  for (const col of columns) found.push(...await unopenedSecrets(deps.db, col, deps.config.keys.encryptionKey, deps.clock.now()));
  return found;
}

function logUnopened(deps: Deps, col: SecretColumn, unopened: readonly UnopenedSecret[]): void {
  for (const u of unopened.slice(0, NAMED)) {
    deps.logger.error({ kind: u.kind, row: u.id, reason: u.reason }, `${describeUnopened(u)}: what needs it fails until it opens`);
  }
  if (unopened.length > NAMED) {
    deps.logger.error({ kind: col.kind, count: unopened.length }, `${unopened.length} ${col.kind} rows cannot be opened (the first ${NAMED} are named above)`);
  }
}

// once per process (several roles may share one): the sealing, and each column's check
const sealedOnce = new WeakMap<object, Promise<void>>();
const checkedOnce = new WeakMap<object, Map<SecretColumn, Promise<UnopenedSecret[]>>>();

/**
 * A role's start: seal what is plaintext (with a key), then open every secret of
 * `columns` and log those that do not open. Never throws: a database error here is
 * logged, and the role starts as it did before this check.
 */
export async function checkSecretsAtStart(ctx: Deps, columns: readonly SecretColumn[]): Promise<UnopenedSecret[]> {
  if (ctx.config.keys.encryptionKey) {
    let sealing = sealedOnce.get(ctx);
    if (!sealing) {
      sealing = sealPlaintextSecrets(ctx).then(
        (s) => {
          const sealed = s.filter((x) => x.sealed > 0);
          if (sealed.length > 0) ctx.logger.warn({ sealed: Object.fromEntries(sealed.map((x) => [`${x.table}.${x.column}`, x.sealed])) }, 'secrets kept in plaintext by a development run are now sealed');
        },
        (err: unknown) => ctx.logger.error({ err }, 'could not seal the plaintext secrets at start; `tributary keys seal` does it'));
      sealedOnce.set(ctx, sealing);
    }
    await sealing;
  }
  let checks = checkedOnce.get(ctx);
  if (!checks) checkedOnce.set(ctx, (checks = new Map()));
  const found: UnopenedSecret[] = [];
  for (const col of columns) {
    let check = checks.get(col);
    if (!check) {
      check = findUnopenedSecrets(ctx, [col]).then(
        (u) => { logUnopened(ctx, col, u); return u; },
        (err: unknown) => { ctx.logger.error({ err, kind: col.kind }, 'could not check whether the secrets open'); return []; });
      checks.set(col, check);
    }
    found.push(...await check);
  }
  return found;
}

export interface SecretsMonitor {
  /** the start check (checkSecretsAtStart); health reports what it found */
  start(): Promise<void>;
  /** why this node cannot open a secret it needs: empty when all open */
  problems(): Promise<string[]>;
}

/** An API node's view: the key ring's live answer for the signing key, and the other secrets re-opened now and then. */
export function createSecretsMonitor(ctx: Deps, keyRing: Pick<KeyRing, 'signingKeyStatus'>, columns: readonly SecretColumn[] = ROLE_SECRETS.api): SecretsMonitor {
  const others = columns.filter((c) => c !== SIGNING_KEY_SECRETS);
  let last: { at: number; found: Promise<UnopenedSecret[]> } | undefined;
  const othersFound = (): Promise<UnopenedSecret[]> => {
    const now = ctx.clock.now();
    if (!last || now - last.at >= SECRETS_RECHECK_MS) {
      last = { at: now, found: findUnopenedSecrets(ctx, others).catch(() => []) };
    }
    return last.found;
  };
  return {
    async start() {
      const found = await checkSecretsAtStart(ctx, columns);
      last = { at: ctx.clock.now(), found: Promise.resolve(found.filter((u) => u.kind !== SIGNING_KEY_SECRETS.kind)) };
    },
    async problems() {
      const reasons: string[] = [];
      // a key store that cannot be read is health's postgres check, not a secret
      const status = await keyRing.signingKeyStatus().catch(() => undefined);
      if (status && !status.ok) reasons.push(status.reason);
      const found = await othersFound();
      reasons.push(...found.slice(0, NAMED).map(describeUnopened));
      if (found.length > NAMED) reasons.push(`and ${found.length - NAMED} more secrets cannot be opened`);
      return reasons;
    },
  };
}
