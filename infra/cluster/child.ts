/**
 * One supervised process of the cluster: its output appended to a log file of its own,
 * restarted after an unexpected exit when asked (as systemd's Restart=on-failure or an
 * orchestrator would), killed with a chosen signal, and stopped for good on shutdown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { setPriority } from 'node:os';

export interface ChildSpec {
  name: string;
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  logFile: string;
  cwd?: string;
  /** run as this user (the supervisor runs as root and PostgreSQL refuses to) */
  uid?: number;
  gid?: number;
  /** restart after an exit the supervisor did not ask for (default true) */
  restart?: boolean;
  restartDelayMs?: number;
  /** the signal of a clean stop (default SIGTERM; PostgreSQL's fast shutdown is SIGINT) */
  stopSignal?: NodeJS.Signals;
  /** how long a clean stop may take before SIGKILL (default 30 s) */
  stopTimeoutMs?: number;
  /** scheduling priority (nice), set after each start; lowering it below 0 needs root, else it stays 0 */
  nice?: number;
}

export interface Supervised {
  readonly name: string;
  readonly spec: ChildSpec;
  pid(): number | undefined;
  running(): boolean;
  /** how many times the process was (re)started */
  starts(): number;
  /** sends a signal as is; with restart on, the supervisor brings the process back */
  signal(sig: NodeJS.Signals): void;
  /** stops it (no restart), resolved once it has exited */
  stop(): Promise<void>;
  /** starts it again after a stop */
  start(): void;
  /** resolves on the next exit */
  nextExit(): Promise<number | null>;
}

export type ExitListener = (name: string, code: number | null, signal: NodeJS.Signals | null) => void;

export function supervise(spec: ChildSpec, onExit: ExitListener = () => undefined): Supervised {
  let child: ChildProcess | undefined;
  let wanted = false;
  let count = 0;
  let exitWaiters: ((code: number | null) => void)[] = [];
  let restartTimer: NodeJS.Timeout | undefined;

  const launch = (): void => {
    const fd = openSync(spec.logFile, 'a');
    count += 1;
    const p = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', fd, fd],
      // its own process group: a Ctrl-C reaches the supervisor alone, which stops the rest in order
      detached: true,
      ...(spec.uid !== undefined ? { uid: spec.uid } : {}),
      ...(spec.gid !== undefined ? { gid: spec.gid } : {}),
    });
    closeSync(fd);
    child = p;
    if (spec.nice !== undefined && p.pid !== undefined) {
      try { setPriority(p.pid, spec.nice); } catch { /* not permitted: the default priority */ }
    }
    p.once('error', () => undefined);
    p.once('exit', (code, sig) => {
      if (child === p) child = undefined;
      for (const w of exitWaiters.splice(0)) w(code);
      onExit(spec.name, code, sig);
      if (wanted && spec.restart !== false) {
        restartTimer = setTimeout(() => { restartTimer = undefined; if (wanted && !child) launch(); }, spec.restartDelayMs ?? 1000);
      }
    });
  };

  const exited = (): Promise<number | null> => new Promise((resolve) => exitWaiters.push(resolve));

  const self: Supervised = {
    name: spec.name,
    spec,
    pid: () => child?.pid,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    starts: () => count,
    signal(sig) { child?.kill(sig); },
    async stop() {
      wanted = false;
      if (restartTimer) { clearTimeout(restartTimer); restartTimer = undefined; }
      const p = child;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const done = exited();
      p.kill(spec.stopSignal ?? 'SIGTERM');
      const force = setTimeout(() => p.kill('SIGKILL'), spec.stopTimeoutMs ?? 30_000);
      await done;
      clearTimeout(force);
    },
    start() {
      wanted = true;
      if (!child) launch();
    },
    nextExit: exited,
  };
  exitWaiters = [];
  self.start();
  return self;
}
