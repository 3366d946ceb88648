/** The short-lived commands: migrate, replay, status, config. */
import { readFile, writeFile } from 'node:fs/promises';
import { createDb, ensureDatabase } from '../../../infra/postgres/database.js';
import { migrateToLatest } from '../../../infra/migrations/index.js';
import { PROJECTIONS, findProjection } from '../../../projections/registry.js';
import { replayProjection } from '../../../projections/replay.js';
import { readCheckpoints } from '../../../projections/runner/checkpoint.js';
import { bumpReadVersions } from '../../../infra/cache/read-cache.js';
import { groupInfo } from '../../../infra/redis/group-lag.js';
import { deadLetterCount } from '../../../infra/redis/dead-letter.js';
import { configDocs, type Config } from '../../kernel/config/config.js';
import type { AppContext } from '../context.js';

export async function migrate(config: Config, log: (s: string) => void): Promise<void> {
  if (await ensureDatabase(config.db.url)) log(`created database ${new URL(config.db.url).pathname.slice(1)}`);
  const db = createDb(config.db.url, 2, 'tributary-migrate');
  try {
    const r = await migrateToLatest(db);
    const ran = r.results?.filter((x) => x.status === 'Success').map((x) => x.migrationName) ?? [];
    log(ran.length ? `applied migrations: ${ran.join(', ')}` : 'database is up to date');
  } finally {
    await db.destroy();
  }
}

export async function replay(ctx: AppContext, target: string, log: (s: string) => void): Promise<void> {
  const targets = target === 'all' ? PROJECTIONS.filter((p) => p.replayable) : [findProjection(target)];
  if (targets.some((t) => t === undefined)) {
    throw new Error(`unknown projection '${target}'; known: all, ${PROJECTIONS.filter((p) => p.replayable).map((p) => p.name).join(', ')}`);
  }
  for (const p of targets) {
    const r = await replayProjection(ctx.db, p!, { committed: () => bumpReadVersions(ctx.redis, ctx.keys, p!.name) });
    log(`${r.projection}: ${r.events} events replayed in ${r.ms} ms, digest ${r.digest}`);
  }
}

export interface ProjectionStatus { projection: string; checkpoint: string | null; applied: string | null; lag: number | null; pending: number; consumers: number; deadLetters: number }

export async function projectionStatus(ctx: AppContext): Promise<ProjectionStatus[]> {
  const groups = new Map((await groupInfo(ctx.redis, ctx.keys.events)).map((g) => [g.name, g]));
  const cps = await readCheckpoints(ctx.db);
  const out: ProjectionStatus[] = [];
  for (const p of PROJECTIONS) {
    const g = groups.get(p.name);
    const cp = cps.get(p.name);
    out.push({
      projection: p.name,
      checkpoint: cp?.lastStreamId ?? null,
      applied: cp?.eventsApplied ?? null,
      lag: g?.lag ?? null,
      pending: g?.pending ?? 0,
      consumers: g?.consumers ?? 0,
      deadLetters: await deadLetterCount(ctx.redis, ctx.keys, p.name),
    });
  }
  return out;
}

export function configTable(): string {
  const rows = configDocs().map((d) => `| \`${d.name}\` | \`${d.default}\` | ${d.description} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** Rewrites the table between a document's config-table markers (docs/configuration.md). */
export async function writeReadmeTable(file: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const re = /(<!-- config-table:start -->\n)[\s\S]*?(\n<!-- config-table:end -->)/;
  if (!re.test(text)) throw new Error(`${file} has no config-table markers`);
  await writeFile(file, text.replace(re, (_m, a: string, b: string) => `${a}${configTable()}${b}`));
}
