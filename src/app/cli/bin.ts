#!/usr/bin/env node
/**
 * `tributary <command>`: start, serve --role <api|projector|indexer|webhooks|notifier|scheduler>,
 * migrate, replay <projection>|all, localnet, keys rotate, status, config.
 */
import { parseArgs, flagValues } from './args.js';
import { contextFor, loadConfigOrExit, runUntilSignalled } from './process.js';
import { feePayerLines, feePayerReport } from '../../../commands/x402/exact/report.js';
import { configTable, migrate, projectionStatus, replay, writeReadmeTable } from './commands.js';
import { reportLines, schedulerReport } from '../../../commands/scheduler/report.js';
import { chainIo } from '../../../commands/scheduler/chain.js';
import { createRpcClient } from '../../../infra/solana/rpc-client.js';
import type { Config } from '../../kernel/config/config.js';

import { closeContext } from '../build-context.js';
import cluster from 'node:cluster';
import { ROLES } from '../roles/registry.js';
import { runApiProcesses } from './api-processes.js';
import { EXTRA_COMMANDS } from './extra-commands.js';

/** `status` reads signer balances with a short timeout: a slow chain must not hold up the report. */
const statusChainIo = (c: Config) => chainIo(createRpcClient({ url: c.solana.rpcUrl, timeoutMs: 2000 }), c.solana.programId, c.solana.commitment);

const USAGE = `usage: tributary <command>
  serve --role <r>[,<r>...]     run roles: ${Object.keys(ROLES).join(', ')}
  migrate                       create the database if missing and apply migrations
  replay <projection>|all       rebuild read models from the archive while the service runs
  status                        each projection's checkpoint, lag, pending entries and dead letters
  config [--write-readme]       every configuration variable with its default (the flag rewrites docs/configuration.md's table)
${Object.values(EXTRA_COMMANDS).map((c) => `  ${c.usage.padEnd(30)}${c.summary}`).join('\n')}`;

const out = (s: string) => process.stdout.write(`${s}\n`);

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const [command, ...rest] = args.positionals;
  switch (command) {
    case 'config': {
      const readme = args.flags.get('write-readme')?.[0];
      if (readme) await writeReadmeTable(readme === 'true' ? 'docs/configuration.md' : readme);
      else out(configTable());
      return;
    }
    case 'migrate':
      await migrate(loadConfigOrExit(process.env), out);
      return;
    case 'serve': {
      const roles = flagValues(args, 'role');
      const unknown = roles.filter((r) => !(r in ROLES));
      if (roles.length === 0 || unknown.length > 0) throw new Error(`serve needs --role with one or more of: ${Object.keys(ROLES).join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`);
      const config = loadConfigOrExit(process.env);
      if (roles.length === 1 && roles[0] === 'api' && config.http.apiProcesses > 1 && cluster.isPrimary) {
        await runApiProcesses(config.http.apiProcesses);
        return;
      }
      const ctx = contextFor(config, roles.join('+'));
      await runUntilSignalled(ctx, async () => {
        const started = [];
        for (const r of roles) started.push(await ROLES[r]!(ctx));
        return started;
      });
      return;
    }
    case 'replay': {
      const target = rest[0];
      if (!target) throw new Error('replay needs a projection name or "all"');
      const ctx = contextFor(loadConfigOrExit(process.env), 'replay');
      try { await replay(ctx, target, out); } finally { await closeContext(ctx); }
      return;
    }
    case 'status': {
      const ctx = contextFor(loadConfigOrExit(process.env), 'status');
      try {
        const rows = await projectionStatus(ctx);
        if (args.flags.has('json')) out(JSON.stringify(rows, null, 2));
        else {
          for (const r of rows) out(`${r.projection.padEnd(Math.max(...rows.map((x) => x.projection.length)))} checkpoint ${String(r.checkpoint).padEnd(18)} applied ${String(r.applied).padEnd(10)} lag ${String(r.lag).padEnd(8)} pending ${String(r.pending).padEnd(6)} consumers ${r.consumers} dead ${r.deadLetters}`);
          for (const line of reportLines(await schedulerReport(ctx.db, statusChainIo(ctx.config), ctx.config.scheduler.signerMinLamports))) out(line);
          for (const line of feePayerLines(await feePayerReport(ctx.db, statusChainIo(ctx.config).rpc, ctx.config.x402.exact.feePayerMinLamports))) out(line);
        }
      } finally { await closeContext(ctx); }
      return;
    }
    case undefined:
    case 'help':
    case '--help':
      out(USAGE);
      return;
    default: {
      const extra = EXTRA_COMMANDS[command];
      if (!extra) throw new Error(`unknown command '${command}'\n${USAGE}`);
      await extra.run(args, process.env);
    }
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`tributary: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
