/**
 * The money model's long form for `make soak`: MODEL_RUNS runs (default 3) of MODEL_ACTIONS
 * seeded actions each (default 120) on the hostile localnet (LOCALNET_FAULTS, default all),
 * each seed drawn at random unless MODEL_SEED names one. Prints each run's report and every
 * violation (policy, expected, found), then one line with the runs, actions, faults injected
 * and violations; exits 1 if any invariant failed. Uses the machine's PostgreSQL and Redis,
 * a database and key prefix of its own per run, as the tests do.
 */
import { explain, report, runModel } from '../integration/money-model-run.js';

const runs = Number(process.env['MODEL_RUNS'] ?? 3);
const actions = Number(process.env['MODEL_ACTIONS'] ?? 120);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(actions) || actions < 1) throw new Error('MODEL_RUNS and MODEL_ACTIONS must be positive integers');
const faults = process.env['LOCALNET_FAULTS'] || 'all';
const seeds = process.env['MODEL_SEED'] ? [Number(process.env['MODEL_SEED'])] : Array.from({ length: runs }, () => Math.floor(Math.random() * 1_000_000));

let violations = 0, injected = 0, done = 0;
for (const seed of seeds) {
  const r = await runModel(seed, actions, faults);
  process.stdout.write(`${report(r)}\n`);
  for (const v of r.violations) process.stdout.write(`${explain(v)}\n`);
  violations += r.violations.length;
  injected += Object.values(r.faults).reduce((a, b) => a + b, 0);
  done += r.actions;
}
process.stdout.write(`money model: ${seeds.length} runs, ${done} actions, ${injected} faults injected (${faults}), ${violations} violations\n`);
process.exit(violations === 0 ? 0 : 1);
