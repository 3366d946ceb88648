/**
 * `make soak`: SOAK_RUNS soaks (default 1) one after the other, each a fresh run.ts with
 * the same settings; prints each run's verdict and a final line, and exits 1 unless every
 * run passed. A run's full output goes to the terminal as it comes.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const runs = Number(process.env['SOAK_RUNS'] ?? 1);
if (!Number.isInteger(runs) || runs < 1) throw new Error('SOAK_RUNS must be a positive integer');
const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'run.ts');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const runDir = path.resolve(root, process.env['SOAK_RUN_DIR'] ?? 'tmp/soak');
// Each run starts by wiping runDir: a failed run's logs are moved beside it first, so the
// cause of a failure in run 2 of 5 is still there to read when run 5 ends.
const keptDir = `${runDir}-failed`;

function keepLogs(i: number): void {
  const logs = path.join(runDir, 'logs');
  if (!existsSync(logs)) return;
  mkdirSync(keptDir, { recursive: true });
  const to = path.join(keptDir, `run-${i}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  renameSync(logs, to);
  // with SOAK_KEEP_DATA=1 the run's PostgreSQL data is kept too: its intents and charges can be queried
  const pg = path.join(runDir, 'pg-primary');
  if (existsSync(pg)) renameSync(pg, path.join(to, 'pg-primary'));
  process.stdout.write(`soak run ${i}: its logs${existsSync(path.join(to, 'pg-primary')) ? ' and PostgreSQL data' : ''} kept in ${path.relative(root, to)}\n`);
}

function runOnce(): Promise<{ code: number; verdict: string; seconds: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let verdict = 'no report';
    let tail = '';
    child.stdout.on('data', (b: Buffer) => {
      process.stdout.write(b);
      tail = (tail + b.toString()).slice(-4096);
      const m = [...tail.matchAll(/^(\d+ passed, \d+ failed)/gm)].at(-1);
      if (m) verdict = m[1]!;
    });
    child.on('exit', (code) => resolve({ code: code ?? 1, verdict, seconds: (Date.now() - started) / 1000 }));
  });
}

const verdicts: string[] = [];
let passed = 0;
for (let i = 1; i <= runs; i += 1) {
  const r = await runOnce();
  if (r.code === 0) passed += 1;
  else keepLogs(i);
  verdicts.push(`soak run ${i}/${runs}: ${r.code === 0 ? 'PASS' : 'FAIL'} (${r.verdict}, ${r.seconds.toFixed(0)} s)`);
  process.stdout.write(`\n${verdicts.join('\n')}\n`);
}
process.stdout.write(`soak: ${passed} of ${runs} runs passed${process.env['SOAK_CPU_HOG'] === '1' ? ' with a CPU hog beside each' : ''}\n`);
process.exit(passed === runs ? 0 : 1);
