/**
 * `serve --role api` with API_PROCESSES > 1: this process forks that many API processes
 * (node:cluster), which share PORT, and keeps them running. One Node process serves from
 * one core; on a machine with free cores, more processes serve more requests. Each has its
 * own pools and read cache. A process that exits is replaced, unless it exits within
 * FAST_EXIT_MS of its start (a configuration or startup error would loop): then every
 * process is stopped and this one exits with an error. SIGTERM/SIGINT stop them all.
 */
import cluster, { type Worker } from 'node:cluster';

const FAST_EXIT_MS = 10_000;

export function runApiProcesses(count: number): Promise<void> {
  const startedAt = new Map<Worker, number>();
  let stopping = false;
  const fork = () => { const w = cluster.fork(); startedAt.set(w, Date.now()); };
  const stopAll = () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  return new Promise((resolve) => {
    cluster.on('exit', (w, code, signal) => {
      const lived = Date.now() - (startedAt.get(w) ?? 0);
      startedAt.delete(w);
      if (!stopping && lived < FAST_EXIT_MS) {
        process.stderr.write(`tributary: an API process exited ${lived} ms after its start (code ${code ?? signal}); stopping\n`);
        process.exitCode = 1;
        stopAll();
      } else if (!stopping) {
        fork();
      }
      if (stopping && startedAt.size === 0) resolve();
    });
    process.once('SIGTERM', stopAll);
    process.once('SIGINT', stopAll);
    for (let i = 0; i < count; i += 1) fork();
  });
}
