/**
 * One money-model run: start the world on a hostile localnet, play `actions` seeded
 * actions (sampling each payer account's unsettled usage after each), drain (scheduler and
 * settler up until every metered chunk is charged or unbillable and the index holds every
 * payment), then check every invariant, the reconciliation's comparison of chain and
 * ledgers included.
 */
import { servedSql } from '../../commands/settlement/served-marks.js';
import { createRpcClient } from '../../infra/solana/rpc-client.js';
import { reconcile } from '../../queries/reconciliation/reconcile.js';
import { waitFor } from '../support/process.js';
import { nextAction, perform, restoreAll } from './money-model-actions.js';
import { chainView } from './money-model-chain.js';
import { accessViolations, paygViolations, subscriptionViolations, type Violation } from './money-model-checks.js';
import { prepaidViolations, setupPrepaid } from './money-model-prepaid.js';
import { createRng } from './money-model-rng.js';
import { setupUpto, uptoViolations } from './money-model-upto.js';
import { close, sampleExposure, startWorld, type World } from './money-model-world.js';

export interface RunResult {
  seed: number; actions: number; counts: Record<string, number>; faults: Record<string, number>;
  policies: number; payments: number; samples: number; violations: Violation[]; seconds: number;
}

/** `sabotage`: a wrong done behind the service's back after the actions, before the drain (the checks' own test). */
export async function runModel(seed: number, actions: number, faults: string, sabotage?: (w: World) => Promise<void>): Promise<RunResult> {
  const started = Date.now();
  process.stdout.write(`money model seed ${seed}: ${actions} actions, faults ${faults || 'off'} (replay: MODEL_SEED=${seed})\n`);
  const rng = createRng(seed);
  const w = await startWorld(seed, rng, faults);
  try {
    const prepaid = await setupPrepaid(w);
    const upto = await setupUpto(w, prepaid);
    for (let i = 0; i < actions; i += 1) {
      await perform(w, nextAction(w), prepaid, upto);
      await sampleExposure(w);
    }
    await sabotage?.(w);
    const endSec = await drain(w);
    const chain = chainView(w.s.h.ln, w.s.gateway);
    const violations = [
      ...await paygViolations(w, chain), ...await subscriptionViolations(w, chain, endSec), ...accessViolations(w, chain), ...await prepaidViolations(w, prepaid, chain), ...uptoViolations(upto, chain), ...await reconciled(w),
    ];
    const injected = await w.s.h.rpc.call<{ counts: Record<string, number> }>('tributary_getFaults', []);
    return {
      seed, actions, counts: w.counts, faults: injected.counts, policies: chain.size,
      payments: [...chain.values()].reduce((a, p) => a + p.records.length, 0), samples: w.samples.length, violations,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await w.close();
  }
}

export const explain = (v: Violation): string => `  ${v.invariant}: policy ${v.policy}, expected ${v.expected}, found ${v.found}`;

/** One line: the seed, the actions, the faults injected, what was checked and the violations found. */
export function report(r: RunResult): string {
  const faults = Object.values(r.faults).reduce((a, b) => a + b, 0);
  return `money model seed ${r.seed}: ${r.actions} actions (${JSON.stringify(r.counts)}), ${faults} faults injected (${JSON.stringify(r.faults)}), `
    + `${r.policies} policies, ${r.payments} payments, ${r.samples} bearer answers, ${r.violations.length} violations, ${r.seconds} s`;
}

const unsettled = async (w: World): Promise<number> => {
  const r = await w.s.h.env.db.selectFrom('payg_usage as u').leftJoin('payg_charges as c', 'c.id', 'u.charge_id')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('u.unbillable_reason', 'is', null).where(servedSql('u'))
    .where((eb) => eb.or([eb('u.charge_id', 'is', null), eb('c.status', '=', 'sending')]))
    .executeTakeFirstOrThrow();
  return Number(r.n);
};

/** The scheduler's intents and the settler's charges sent and not resolved yet. */
const sendingNow = async (w: World): Promise<number> => {
  const db = w.s.h.env.db;
  const intents = await db.selectFrom('execution_intents').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'sending').executeTakeFirstOrThrow();
  const charges = await db.selectFrom('payg_charges').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'sending').executeTakeFirstOrThrow();
  return Number(intents.n) + Number(charges.n);
};

/** Every payer able to pay again, scheduler and settler up until the metered usage is settled; answers the end (unix seconds) of the scheduler's watch. */
async function drain(w: World): Promise<number> {
  if (!w.scheduler) { w.scheduler = w.s.scheduler(); close(w, 'service', 'scheduler-down'); }
  if (!w.settler) { w.settler = w.s.settler(); close(w, 'service', 'settler-down'); }
  await restoreAll(w);
  // a charge the chain refused waits out a step of the retry schedule (the longest: 60 s here) before
  // it is tried again, charged now that the payer can pay, or given up as unbillable
  const longestStep = Math.max(0, ...w.s.config.scheduler.dunningScheduleMs);
  await waitFor(async () => (await unsettled(w)) === 0, 25_000 + longestStep, 'every metered chunk charged or unbillable').catch(() => undefined);
  // an upto settlement whose answer was lost is resolved from the chain by the settler once past its confirmation wait
  const sending = `${w.s.config.redis.prefix}x402:upto-sending`;
  await waitFor(async () => (await w.s.h.env.redis.zcard(sending)) === 0, 30_000, 'every upto settlement resolved').catch(() => undefined);
  // a subscription period due now has one scheduler round to be paid
  await new Promise((r) => setTimeout(r, 3000));
  // stopped only with nothing sent and unresolved: a send whose answer erred is released `sending` for the
  // next round to resolve from the chain, and a reconciliation then finds it in doubt, rightly but too soon
  let endSec = 0;
  for (let k = 0; k < 3; k += 1) {
    await waitFor(async () => (await sendingNow(w)) === 0, 30_000, 'every sent transaction resolved').catch(() => undefined);
    endSec = Math.floor(Date.now() / 1000);
    await w.scheduler.stop();
    await w.settler.stop();
    w.scheduler = undefined;
    w.settler = undefined;
    if (k === 2 || (await sendingNow(w)) === 0) break;
    w.scheduler = w.s.scheduler();
    w.settler = w.s.settler();
  }
  const signatures = [...chainView(w.s.h.ln, w.s.gateway).values()].flatMap((p) => p.records.map((r) => r.signature));
  await waitFor(async () => {
    if (signatures.length === 0) return true;
    const rows = await w.s.h.env.db.selectFrom('payments').select('signature').where('signature', 'in', signatures).execute();
    return new Set(rows.map((r) => r.signature)).size === new Set(signatures).size;
  }, 30_000, 'every payment indexed').catch(() => undefined);
  return endSec;
}

/** The reconciliation's comparison: every money movement on chain one service record, and back; unbillable usage is reported, not a defect. */
async function reconciled(w: World): Promise<Violation[]> {
  const r = await reconcile({
    db: w.s.h.env.db, redis: w.s.h.env.redis, redisPrefix: w.s.h.env.prefix, nowMs: () => Date.now(), unsettledBoundMs: 60_000,
    chain: { rpc: createRpcClient({ url: w.s.h.ln.rpcUrl, timeoutMs: 10_000 }), programId: w.s.config.solana.programId, commitment: 'confirmed' },
  }, { gateway: w.s.gateway, since: w.since });
  return r.differences.filter((d) => d.cause !== 'unbillable').map((d) => ({
    invariant: 'every money movement on chain matches one service record, and back', policy: d.policy,
    expected: 'no difference', found: `${d.cause} (${d.source}) chain ${d.chainAmount ?? '-'} service ${d.serviceAmount ?? '-'} ${d.signatures.join(',')}: ${d.detail}`,
  }));
}
