/**
 * The sealed secrets a process opens, at start and for /v1/health.
 *
 * With SIGNING_KEY_ENCRYPTION_KEY set, a process first seals under it every secret a
 * development run kept in the clear (`plain:`) and, when SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS
 * lists earlier keys, re-seals every secret that opens only under one of them; each change
 * logged. Then it tries to open every secret its roles will need and logs at error level
 * each one that does not open (its kind and row, never the secret). Neither stops the
 * process: a gateway whose key does not open stops that gateway only. An API node's health
 * answers `degraded` with the reasons, and counts the secrets still under a previous key
 * (they open: not a degradation, but the previous key cannot be removed yet).
 */
import type { AppContext } from './context.js';
import type { KeyRing } from '../../infra/signing-keys/key-ring.js';
import { countPlain, resealColumn, surveyColumn, unopenedSecrets, type SecretColumn, type UnopenedSecret } from '../../infra/secrets/columns.js';
import { hasPreviousKeys } from '../kernel/config/secret-key.js';
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

/** One kind's sealing: what this run changed, then what the column holds. */
export interface SealSummary {
  kind: string; table: string; column: string;
  /** sealed from plaintext by this run */
  sealed: number;
  /** re-sealed by this run from a previous key under the current one */
  resealed: number;
  plaintextLeft: number;
  /** rows that still open only under a previous key (changed by another process meanwhile, say) */
  underPreviousKey: number;
  /** rows in use that open under no key: what needs them fails */
  unopened: number;
  /** rows no longer in use that open under no key */
  unopenedNotInUse: number;
}

export class NoEncryptionKeyError extends Error {
  constructor() {
    super('SIGNING_KEY_ENCRYPTION_KEY is not set: there is no key to seal secrets with (32 bytes, hex or base64)');
    this.name = 'NoEncryptionKeyError';
  }
}

/**
 * Seals under the configured key every secret of every kind kept in plaintext or under a
 * previous key, then opens every row to report what is left; safe with other nodes doing
 * the same (`tributary keys seal`).
 */
export async function sealSecrets(deps: Deps): Promise<SealSummary[]> {
  const key = deps.config.keys.encryptionKey;
  if (!key) throw new NoEncryptionKeyError();
  const out: SealSummary[] = [];
  for (const col of SECRET_COLUMNS) {
    const done = await resealColumn(deps.db, col, key, deps.logger);
    const left = await surveyColumn(deps.db, col, key, deps.clock.now(), 'all');
    out.push({
      kind: col.kind, table: col.table, column: col.column, sealed: done.sealed.length, resealed: done.resealed.length,
      plaintextLeft: await countPlain(deps.db, col), underPreviousKey: left.underPreviousKey.length,
      unopened: left.unopened.length, unopenedNotInUse: left.unopenedNotInUse,
    });
  }
  return out;
}

/** A process's start: every column re-sealed (resealColumn), a summary logged when anything changed. */
async function resealAtStart(deps: Deps): Promise<void> {
  const key = deps.config.keys.encryptionKey;
  if (!key) return;
  const sealed: Record<string, number> = {};
  const resealed: Record<string, number> = {};
  for (const col of SECRET_COLUMNS) {
    const done = await resealColumn(deps.db, col, key, deps.logger);
    if (done.sealed.length > 0) sealed[`${col.table}.${col.column}`] = done.sealed.length;
    if (done.resealed.length > 0) resealed[`${col.table}.${col.column}`] = done.resealed.length;
  }
  if (Object.keys(sealed).length > 0) deps.logger.warn({ sealed }, 'secrets kept in plaintext by a development run are now sealed');
  if (Object.keys(resealed).length > 0) deps.logger.warn({ resealed }, 'secrets sealed under a previous key are now sealed under SIGNING_KEY_ENCRYPTION_KEY');
}

/**
 * How many secrets of every kind open only under a key of SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS
 * (0 without such keys: nothing can).
 */
export async function countUnderPreviousKey(deps: Deps): Promise<number> {
  const key = deps.config.keys.encryptionKey;
  if (!hasPreviousKeys(key)) return 0;
  let n = 0;
  for (const col of SECRET_COLUMNS) n += (await surveyColumn(deps.db, col, key, deps.clock.now(), 'all')).underPreviousKey.length;
  return n;
}

/** Says whether the previous keys may be removed; only when some are configured. */
async function reportPreviousKeys(deps: Deps): Promise<number> {
  if (!hasPreviousKeys(deps.config.keys.encryptionKey)) return 0;
  const n = await countUnderPreviousKey(deps);
  if (n > 0) deps.logger.warn({ underPreviousKey: n }, `${n} secrets still open only under a key of SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS (sealed meanwhile by a process without the new key?): \`tributary keys seal\` or a restart re-seals them; keep the previous keys until none are left`);
  else deps.logger.info('every secret opens under SIGNING_KEY_ENCRYPTION_KEY: SIGNING_KEY_ENCRYPTION_KEY_PREVIOUS may be removed once every process runs with the new key');
  return n;
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
const sealedOnce = new WeakMap<object, Promise<number | undefined>>();
const checkedOnce = new WeakMap<object, Map<SecretColumn, Promise<UnopenedSecret[]>>>();

/** The process's sealing at start, once: the count of secrets left under a previous key, undefined when unknown. */
function sealOnce(ctx: Deps): Promise<number | undefined> {
  let sealing = sealedOnce.get(ctx);
  if (!sealing) {
    sealing = resealAtStart(ctx).then(
      () => reportPreviousKeys(ctx),
      (err: unknown) => { ctx.logger.error({ err }, 'could not seal the secrets at start; `tributary keys seal` does it'); return undefined; })
      .catch((err: unknown) => { ctx.logger.error({ err }, 'could not count the secrets under a previous key'); return undefined; });
    sealedOnce.set(ctx, sealing);
  }
  return sealing;
}

/**
 * A role's start: seal what is plaintext or under a previous key (with a key), then open
 * every secret of `columns` and log those that do not open. Never throws: a database
 * error here is logged, and the role starts as it did before this check.
 */
export async function checkSecretsAtStart(ctx: Deps, columns: readonly SecretColumn[]): Promise<UnopenedSecret[]> {
  if (ctx.config.keys.encryptionKey) await sealOnce(ctx);
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
  /** how many secrets open only under a previous key, as last counted; undefined until known */
  underPreviousKey(): number | undefined;
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
  // counted in the background: health answers the last count at once and never waits on a full scan
  let previous: { at: number; count: number | undefined; counting: boolean } = { at: 0, count: undefined, counting: false };
  const recount = () => {
    if (previous.counting || ctx.clock.now() - previous.at < SECRETS_RECHECK_MS) return;
    previous = { ...previous, counting: true };
    void countUnderPreviousKey(ctx).then(
      (count) => { previous = { at: ctx.clock.now(), count, counting: false }; },
      () => { previous = { ...previous, at: ctx.clock.now(), counting: false }; });
  };
  return {
    async start() {
      const found = await checkSecretsAtStart(ctx, columns);
      last = { at: ctx.clock.now(), found: Promise.resolve(found.filter((u) => u.kind !== SIGNING_KEY_SECRETS.kind)) };
      const count = ctx.config.keys.encryptionKey ? await sealOnce(ctx) : 0;
      previous = { at: ctx.clock.now(), count, counting: false };
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
    underPreviousKey() {
      recount();
      return previous.count;
    },
  };
}
