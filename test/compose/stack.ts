/**
 * The compose stack of infra/deploy/compose.yaml as the compose test drives it: the
 * compose command (COMPOSE: `docker compose` when the plugin answers, else Debian's
 * `docker-compose`), each service's container, health, restarts.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const COMPOSE_FILE = 'infra/deploy/compose.yaml';

/** the compose command: COMPOSE if set, else the plugin when it answers, else docker-compose */
export function composeCommand(): string[] {
  const set = process.env['COMPOSE'];
  if (set !== undefined && set !== '') return set.split(' ');
  try {
    execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' });
    return ['docker', 'compose'];
  } catch {
    return ['docker-compose'];
  }
}

export interface Stack {
  project: string;
  compose(args: string[], timeoutMs?: number): Promise<string>;
  container(service: string): Promise<string>;
  /** every service's health: `healthy`, `exited 0` for a one-shot, else its state */
  states(): Promise<Map<string, string>>;
  waitHealthy(services: readonly string[], timeoutMs: number): Promise<number>;
  /** a command of the image run inside the service's running container */
  exec(service: string, args: string[], timeoutMs?: number): Promise<{ code: number; stdout: string; stderr: string }>;
}

export function openStack(project: string): Stack {
  const [bin, ...pre] = composeCommand();
  const compose = async (args: string[], timeoutMs = 600_000) =>
    (await run(bin!, [...pre, '-p', project, '-f', COMPOSE_FILE, ...args], { timeout: timeoutMs, maxBuffer: 64 << 20 })).stdout;
  const container = async (service: string) => {
    const id = (await compose(['ps', '-q', service])).trim().split('\n')[0] ?? '';
    if (id === '') throw new Error(`no container for ${service}`);
    return id;
  };
  const states = async () => {
    // --all: compose v2 lists running containers only, and the one-shot migrate has exited by then
    const ids = (await compose(['ps', '--all', '-q'])).trim().split('\n').filter((s) => s !== '');
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const fmt = '{{index .Config.Labels "com.docker.compose.service"}} {{.State.Status}} {{.State.ExitCode}} {{if .State.Health}}{{.State.Health.Status}}{{end}}';
    const { stdout } = await run('docker', ['inspect', '-f', fmt, ...ids]);
    for (const line of stdout.trim().split('\n')) {
      const [service, status, code, health] = line.split(' ');
      out.set(service!, status === 'exited' ? `exited ${code}` : (health || status!));
    }
    return out;
  };
  return {
    project, compose, container, states,
    async waitHealthy(services, timeoutMs) {
      const t0 = Date.now();
      let last = new Map<string, string>();
      while (Date.now() - t0 < timeoutMs) {
        last = await states();
        const ready = services.every((s) => last.get(s) === 'healthy' || (s === 'migrate' && last.get(s) === 'exited 0'));
        if (ready) return Date.now() - t0;
        const failed = [...last].find(([s, st]) => st.startsWith('exited') && !(s === 'migrate' && st === 'exited 0'));
        if (failed) throw new Error(`${failed[0]} ${failed[1]}`);
        await sleep(1000);
      }
      throw new Error(`not healthy after ${timeoutMs} ms: ${[...last].map(([s, st]) => `${s} ${st}`).join(', ')}`);
    },
    async exec(service, args, timeoutMs = 120_000) {
      const id = await container(service);
      try {
        const r = await run('docker', ['exec', id, 'node', 'dist/src/app/cli/bin.js', ...args], { timeout: timeoutMs, maxBuffer: 16 << 20 });
        return { code: 0, stdout: r.stdout, stderr: r.stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
      }
    },
  };
}
