/**
 * Process plumbing for long-running commands: configuration loaded once (a bad value
 * stops the process naming the variable), roles started, and a graceful stop on
 * SIGTERM/SIGINT that lets every role finish its work in flight.
 */
import { loadConfig, ConfigError, type Config } from '../../kernel/config/config.js';
import { createLogger, type Logger } from '../../../infra/log/logger.js';
import { buildContext, closeContext } from '../build-context.js';
import type { AppContext } from '../context.js';
import type { RunningRole } from '../roles/role.js';

export function loadConfigOrExit(env: Readonly<Record<string, string | undefined>>): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`tributary: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

export function processLogger(config: Config, name: string): Logger {
  return createLogger(config.logLevel, name);
}

export async function runUntilSignalled(
  ctx: AppContext,
  start: () => Promise<RunningRole[]>,
  extraStops: (() => Promise<void>)[] = [],
): Promise<void> {
  const roles: RunningRole[] = [];
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx.logger.info({ signal }, 'stopping');
    const force = setTimeout(() => { ctx.logger.error('graceful stop timed out'); process.exit(1); }, 30_000);
    force.unref();
    for (const r of [...roles].reverse()) {
      try { await r.stop(); } catch (err) { ctx.logger.error({ err, role: r.name }, 'role failed to stop'); }
    }
    for (const s of extraStops) await s().catch(() => undefined);
    await closeContext(ctx).catch(() => undefined);
    ctx.logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  try {
    roles.push(...(await start()));
  } catch (err) {
    ctx.logger.fatal({ err }, 'failed to start');
    process.exit(1);
  }
}

export function contextFor(config: Config, role: string): AppContext {
  return buildContext(config, processLogger(config, role), role);
}
