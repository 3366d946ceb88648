/**
 * One API process's served marks: which of the pay-as-you-go rows it wrote were served, kept
 * in one row of payg_served_marks (migration 1014) instead of an UPDATE of every row.
 *
 * The process numbers the rows it writes (a row's served_by is the process, served_seq its
 * number). A number is open from the row's write until its request is answered; the mark
 * says "every row numbered up to served_through was answered": the lowest open number less
 * one. An answered row is served, except the numbers in `unserved`: rows whose request ended
 * unanswered, or whose write failed in doubt, and whose deletion is not confirmed yet (once it
 * is, the row is gone and its number leaves the list). The mark is written at most every
 * FLUSH_MS, one statement in flight, and a served request's mark is durable once that
 * statement has committed: a process that dies before leaves its last requests served and not
 * charged, as the per-row marks did.
 *
 * A row recorded ahead for a request yet to come (commands/x402/meter-pool.ts) is numbered `held`
 * instead: kept in `unserved` (never covered) until its request is served, so that it holds back
 * no other row's mark while it waits to be taken, nor while its request runs; served, it leaves
 * the list and is covered by the next mark (its number is below the mark already).
 *
 * A number left open (a request never answered: a bug, a hung upstream) would hold every later
 * row of the process uncovered, so one open nearly as long as the reservation's bound is given
 * up: its row is never charged (deleted, or dropped by the settler past its bound). Nearly: a
 * margin before the bound (giveUpMarginMs), so that the rows written just after it, whose own
 * bounds are a moment later, are covered before the settler may drop them as reservations past
 * their bound; given up at the bound itself, the mark came a sweep later than theirs (served,
 * never charged).
 */
import { randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../infra/postgres/database.js';
import { runPrepared } from '../../infra/postgres/prepared.js';

/** How long the answered requests gather before their mark is written. */
const FLUSH_MS = 10;
/** How often the given-up numbers are checked and the unconfirmed deletions tried again. */
const SWEEP_MS = 1000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5000;

/**
 * How long before the reservation's bound an open number is given up: more than a sweep (so the
 * mark after it is written before the next rows' bounds), a tenth of the bound, at most 30 s,
 * and never more than half of it (a short bound, in tests, still serves its requests).
 */
function giveUpMarginMs(reservationSeconds: number): number {
  const bound = reservationSeconds * 1000;
  return Math.min(30_000, bound / 2, Math.max(2 * SWEEP_MS, bound / 10));
}

const WRITE_MARK = {
  name: 'payg_served_marks_write',
  text: `INSERT INTO payg_served_marks (node, served_through, unserved, updated_at) VALUES ($1::bigint, $2::bigint, $3::bigint[], now())
    ON CONFLICT (node) DO UPDATE SET served_through = excluded.served_through, unserved = excluded.unserved, updated_at = now()`,
};

/**
 * Whether the payg_usage row `alias` was served: marked the old way (reserved_until NULL, also
 * what a charge folds in) or covered by its process's mark (the SQL function of migration 1014).
 * The settler charges only these.
 */
export function servedSql(alias: string): RawBuilder<boolean> {
  return sql<boolean>`payg_usage_served(${sql.table(alias)})`;
}

export interface ServedMarks {
  /** this process's id (served_by) */
  node: string;
  /**
   * a number for a row about to be written by `requestId` (opened); `held`: a row recorded ahead, excluded
   * from the marks (as `unserved`) rather than holding them back, until served() or removed()
   */
  open(requestId: string, held?: boolean): number;
  /** the row was not written (a refusal): its number closes, nothing to mark */
  notWritten(seq: number): void;
  /** the request was served: resolves once the mark covering it is durable; nothing for a row this process did not write */
  served(requestId: string): Promise<void>;
  /**
   * the request's row is to go (unanswered, or its write in doubt): `remove` deletes it; its number
   * is never covered while the deletion is unconfirmed, and `remove` is tried again until it succeeds
   * (a write in doubt: once the statement that may still commit it is done, usage-ledger.ts)
   */
  removed<T>(requestId: string, remove: () => Promise<T>): Promise<T>;
  /** writes the mark now and waits for it (a few tries): a node stopping, its requests all answered */
  flush(): Promise<void>;
}

/** `after`: the marks started before it was asked for, none of which may answer it (their lists were made before) */
interface Waiter { seq: number; after: number; done: () => void }

export function createServedMarks(db: Db, opts: { reservationSeconds: number; deleteRow: (requestId: string) => Promise<unknown> }): ServedMarks {
  const node = BigInt.asUintN(63, randomBytes(8).readBigUInt64BE()).toString();
  const giveUpMargin = giveUpMarginMs(opts.reservationSeconds);
  let next = 1;
  /** open numbers, oldest first (a Map keeps insertion order), with their request and when opened */
  const open = new Map<number, { requestId: string; at: number }>();
  const byRequest = new Map<string, number>();
  /** numbers of rows recorded ahead whose request is not served yet (to come, or running): never covered */
  const held = new Map<number, { requestId: string; at: number }>();
  let started = 0;
  /** numbers answered unserved whose row's deletion is not confirmed (with how to delete it): never covered */
  const unserved = new Map<number, () => Promise<unknown>>();
  let written = 0;
  let writtenUnserved = '';
  let waiters: Waiter[] = [];
  let flushing = false;
  let timer: NodeJS.Timeout | undefined;
  let retryMs = RETRY_MIN_MS;

  const excluded = (): number[] => [...unserved.keys(), ...held.keys()].sort((a, b) => a - b);
  const unservedKey = (): string => excluded().join(',');
  const through = (): number => {
    for (const seq of open.keys()) return seq - 1;
    return next - 1;
  };
  const close = (seq: number): void => {
    const o = open.get(seq) ?? held.get(seq);
    if (o) { open.delete(seq); held.delete(seq); if (byRequest.get(o.requestId) === seq) byRequest.delete(o.requestId); }
  };

  const schedule = (ms: number): void => {
    if (timer || flushing) return;
    timer = setTimeout(() => { timer = undefined; void writeMark(); }, ms);
    timer.unref();
  };
  /** writes the mark as it stands, unless the last one written says the same */
  async function writeMark(): Promise<void> {
    const upTo = through();
    const list = excluded();
    const key = list.join(',');
    if (upTo === written && key === writtenUnserved) return;
    flushing = true;
    started += 1;
    const mine = started;
    try {
      await runPrepared(db, WRITE_MARK, [node, upTo, list.map(String)]);
      written = upTo;
      writtenUnserved = key;
      retryMs = RETRY_MIN_MS;
      const answers = (w: Waiter) => w.seq <= upTo && w.after < mine;
      const due = waiters.filter(answers);
      waiters = waiters.filter((w) => !answers(w));
      for (const w of due) w.done();
    } catch {
      // Postgres away: the mark is written again later, the requests' promises wait for it
      retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
    } finally {
      flushing = false;
    }
    if (through() !== written || unservedKey() !== writtenUnserved) schedule(retryMs === RETRY_MIN_MS ? FLUSH_MS : retryMs);
  }

  /** deletes the rows of `unserved` again; those confirmed gone leave the list */
  async function confirmDeletions(): Promise<void> {
    for (const [seq, remove] of [...unserved]) {
      try {
        await remove();
        unserved.delete(seq);
      } catch {
        return; // Postgres away: next sweep
      }
    }
  }
  let sweep: NodeJS.Timeout | undefined;
  const sweepEvery = (): NodeJS.Timeout => setInterval(() => {
    // a number open to within the margin of the reservation's bound: its row is never charged
    const bound = Date.now() - (opts.reservationSeconds * 1000 - giveUpMargin);
    for (const [seq, o] of open) {
      if (o.at > bound) break;
      const requestId = o.requestId;
      unserved.set(seq, () => opts.deleteRow(requestId));
      close(seq);
    }
    // a row recorded ahead whose request never came or never ended: deleted, as one given up
    for (const [seq, o] of held) {
      if (o.at > bound) break;
      const requestId = o.requestId;
      unserved.set(seq, () => opts.deleteRow(requestId));
      close(seq);
    }
    if (unserved.size > 0) void confirmDeletions().then(() => schedule(FLUSH_MS));
    schedule(FLUSH_MS);
  }, SWEEP_MS).unref();

  return {
    node,
    open(requestId, isHeld) {
      sweep ??= sweepEvery();
      const seq = next;
      next += 1;
      (isHeld === true ? held : open).set(seq, { requestId, at: Date.now() });
      byRequest.set(requestId, seq);
      return seq;
    },
    notWritten(seq) {
      close(seq);
      schedule(FLUSH_MS);
    },
    served(requestId) {
      const seq = byRequest.get(requestId);
      if (seq === undefined) return Promise.resolve();
      close(seq);
      return new Promise<void>((done) => {
        waiters.push({ seq, after: started, done });
        schedule(FLUSH_MS);
      });
    },
    async flush() {
      clearTimeout(timer);
      timer = undefined;
      for (let tries = 0; tries < 5; tries += 1) {
        while (flushing) await new Promise((r) => setTimeout(r, 5));
        await writeMark();
        if (written === through() && unservedKey() === writtenUnserved) return;
        await new Promise((r) => setTimeout(r, RETRY_MIN_MS));
      }
    },
    async removed(requestId, remove) {
      const seq = byRequest.get(requestId);
      try {
        const r = await remove();
        if (seq !== undefined) { close(seq); schedule(FLUSH_MS); }
        return r;
      } catch (err) {
        if (seq !== undefined) { unserved.set(seq, remove); close(seq); schedule(FLUSH_MS); }
        throw err;
      }
    },
  };
}
