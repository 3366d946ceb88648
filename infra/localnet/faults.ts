/**
 * The hostile chain: faults a real RPC node shows and the localnet otherwise hides, each
 * drawn from its own seeded stream so that the same seed and the same sends give the same
 * faults. `LOCALNET_FAULTS` names them: `all` (every fault at its default rate), or a
 * comma-separated list, each optionally with a rate (`lost-answer=0.2`); empty is off.
 *
 * A fault's rate is the chance it strikes on each occasion: a send (delayed-landing,
 * lost-answer, send-errors), a status read past the node's status window
 * (forgetful-status), a slot (clock-lag: the lag is drawn again). Blockhashes always expire
 * by slot as on a real cluster, so `blockhash-expiry` is accepted and changes nothing.
 */
import { createHash } from 'node:crypto';
import { createPrng, type Prng } from './prng.js';

export const FAULT_NAMES = ['delayed-landing', 'lost-answer', 'send-errors', 'forgetful-status', 'clock-lag', 'blockhash-expiry'] as const;
export type FaultName = (typeof FAULT_NAMES)[number];
export type FaultRates = Readonly<Partial<Record<FaultName, number>>>;

export const DEFAULT_FAULT_RATES: Readonly<Record<FaultName, number>> = {
  'delayed-landing': 0.3, 'lost-answer': 0.1, 'send-errors': 0.1, 'forgetful-status': 1, 'clock-lag': 0.05, 'blockhash-expiry': 1,
};

/** A delayed transaction lands this many slots after its send, at most. */
export const MAX_LANDING_DELAY_SLOTS = 8;
/** Statuses older than this many slots are forgotten without searchTransactionHistory (a node's status cache). */
export const STATUS_WINDOW_SLOTS = 300;
/** The chain clock lags wall time by this much at least and at most (never ahead: block times only grow). */
export const MIN_CLOCK_LAG_MS = 1000;
export const MAX_CLOCK_LAG_MS = 3000;
const MAX_SLOTS_BEHIND = 150;
const LOG_KEPT = 1000;

const isFaultName = (s: string): s is FaultName => (FAULT_NAMES as readonly string[]).includes(s);

/** `all`, `name,name=rate,...` or empty; throws on an unknown name or a rate outside [0, 1]. */
export function parseFaults(spec: string): FaultRates {
  const text = spec.trim();
  if (text === '' || text === 'off' || text === 'none') return {};
  if (text === 'all') return { ...DEFAULT_FAULT_RATES };
  const rates: Partial<Record<FaultName, number>> = {};
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const [name = '', rate] = item.split('=').map((s) => s.trim());
    if (name === 'all') {
      Object.assign(rates, { ...DEFAULT_FAULT_RATES, ...rates });
      continue;
    }
    if (!isFaultName(name)) throw new Error(`LOCALNET_FAULTS: unknown fault "${name}" (known: all, ${FAULT_NAMES.join(', ')})`);
    const r = rate === undefined ? DEFAULT_FAULT_RATES[name] : Number(rate);
    if (rate === '' || !Number.isFinite(r) || r < 0 || r > 1) throw new Error(`LOCALNET_FAULTS: rate of ${name} must be a number in [0, 1], got "${rate}"`);
    rates[name] = r;
  }
  return rates;
}

/** `lost-answer=0.1,clock-lag=0.05`, or `off`. */
export function describeFaults(rates: FaultRates): string {
  const on = FAULT_NAMES.filter((n) => (rates[n] ?? 0) > 0);
  return on.length === 0 ? 'off' : on.map((n) => `${n}=${rates[n]}`).join(',');
}

export const faultsOn = (rates: FaultRates | undefined): boolean => rates !== undefined && FAULT_NAMES.some((n) => (rates[n] ?? 0) > 0);

export type LostAnswer = 'connection-dropped' | 'http-502' | 'internal-error';
export type SendError = { kind: 'node-behind'; numSlotsBehind: number } | { kind: 'rate-limit' };
export interface FaultInjection { n: number; fault: FaultName; detail: string; slot: number; signature?: string }

export interface Faults {
  readonly seed: string;
  readonly rates: FaultRates;
  on(name: FaultName): boolean;
  /** slots a sent transaction waits before it lands; 0 = it lands now */
  landingDelay(signature: string): number;
  /** what becomes of the answer to an accepted send: lost, an error, or (undefined) the signature */
  answer(signature: string): { lost: LostAnswer } | { error: SendError } | undefined;
  /** whether a status this old is forgotten when history is not searched (the same answer every time) */
  forgets(signature: string, txSlot: number): boolean;
  /** a wall clock lagging by the current lag, never going back */
  clock(wallMs: () => number): () => number;
  /** draws the clock lag again, at the fault's rate; called once per slot */
  onSlot(): void;
  injected(): { counts: Record<FaultName, number>; log: FaultInjection[] };
}

export function createFaults(rates: FaultRates, seed: string, slot: () => number): Faults {
  const rate = (n: FaultName): number => rates[n] ?? 0;
  const prngs = new Map<FaultName, Prng>(FAULT_NAMES.map((n) => [n, createPrng(`faults:${seed}:${n}`)]));
  const prng = (n: FaultName): Prng => prngs.get(n) as Prng;
  const counts = Object.fromEntries(FAULT_NAMES.map((n) => [n, 0])) as Record<FaultName, number>;
  const log: FaultInjection[] = [];
  let total = 0;
  const note = (fault: FaultName, detail: string, signature?: string): void => {
    counts[fault] += 1;
    total += 1;
    log.push({ n: total, fault, detail, slot: slot(), ...(signature ? { signature } : {}) });
    if (log.length > LOG_KEPT) log.shift();
  };
  const lagDraw = (): number => prng('clock-lag').between(MIN_CLOCK_LAG_MS, MAX_CLOCK_LAG_MS);
  let lagMs = rate('clock-lag') > 0 ? lagDraw() : 0;
  const forgetDraw = (signature: string): number =>
    createHash('sha256').update(`faults:${seed}:forget:${signature}`).digest().readUInt32LE(0) / 4294967296;

  return {
    seed,
    rates,
    on: (n) => rate(n) > 0,
    landingDelay: (signature) => {
      // every stream draws on every send, so one fault's rate never shifts another's sequence
      const p = prng('delayed-landing');
      const [hit, slots] = [p.next() < rate('delayed-landing'), p.between(1, MAX_LANDING_DELAY_SLOTS)];
      if (!hit) return 0;
      note('delayed-landing', `${slots} slots`, signature);
      return slots;
    },
    answer: (signature) => {
      // both streams draw on every accepted send; a lost answer hides the error
      const l = prng('lost-answer');
      const [lostHit, how] = [l.next() < rate('lost-answer'), l.pick<LostAnswer>(['connection-dropped', 'http-502', 'internal-error'])];
      const e = prng('send-errors');
      const [errorHit, behind, slots] = [e.next() < rate('send-errors'), e.chance(0.5), e.between(1, MAX_SLOTS_BEHIND)];
      if (lostHit) {
        note('lost-answer', how, signature);
        return { lost: how };
      }
      if (!errorHit) return undefined;
      note('send-errors', behind ? `-32005 behind ${slots}` : '429', signature);
      return { error: behind ? { kind: 'node-behind', numSlotsBehind: slots } : { kind: 'rate-limit' } };
    },
    forgets: (signature, txSlot) => {
      if (txSlot >= slot() - STATUS_WINDOW_SLOTS || forgetDraw(signature) >= rate('forgetful-status')) return false;
      note('forgetful-status', 'status not served', signature);
      return true;
    },
    clock: (wallMs) => {
      let last = 0;
      return () => (last = Math.max(last, wallMs() - lagMs));
    },
    onSlot: () => {
      if (rate('clock-lag') <= 0 || !prng('clock-lag').chance(rate('clock-lag'))) return;
      lagMs = lagDraw();
      note('clock-lag', `${lagMs} ms`);
    },
    injected: () => ({ counts: { ...counts }, log: [...log] }),
  };
}
