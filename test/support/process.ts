/** Real processes for end-to-end tests: the CLI as a user starts it, with its output kept. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../infra/cluster/node-flags.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = path.join(ROOT, 'src', 'app', 'cli', 'bin.ts');

export interface Proc { child: ChildProcess; output(): string; exited: Promise<number | null> }

/** `nodeArgs`: options for node itself (e.g. --cpu-prof, not allowed in NODE_OPTIONS), after the service's own. */
export function startCli(args: string[], env: Record<string, string>, nodeArgs: readonly string[] = []): Proc {
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, '--import', 'tsx', BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

export async function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const p = startCli(args, env);
  const code = await p.exited;
  return { code, output: p.output() };
}

export async function waitFor<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGTERM, then the exit code and how long the stop took; past `boundMs`, SIGKILL and fail with the output's tail. */
export async function terminate(proc: Proc, boundMs = 15_000): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  proc.child.kill('SIGTERM');
  const bound = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), boundMs).unref());
  const code = await Promise.race([proc.exited, bound]);
  if (code === 'timeout') {
    proc.child.kill('SIGKILL');
    throw new Error(`no exit ${boundMs} ms after SIGTERM:\n${proc.output().slice(-2000)}`);
  }
  return { code, ms: Date.now() - t0 };
}
