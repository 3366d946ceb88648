/**
 * `tributary status` as an operator runs it: after a projector has applied some events,
 * dead-lettered an unreadable entry and stopped, and more events have arrived, it prints
 * every projection with its checkpoint, its lag and its dead letters (text and --json).
 */
import { expect } from 'chai';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '../support/env.js';
import { runCli, startCli, waitFor } from '../support/process.js';
import { syntheticEvents } from '../support/synthetic-events.js';
import { appendRaw } from '../../infra/redis/event-stream.js';
import { serializeEvent } from '../../src/kernel/events/envelope.js';
import { deadLetterCount } from '../../infra/redis/dead-letter.js';
import { PROJECTIONS } from '../../projections/registry.js';
import type { ProjectionStatus } from '../../src/app/cli/commands.js';

const APPLIED = 40;
const WAITING = 7;

describe('tributary status', function () {
  this.timeout(90_000);
  let env: TestEnv;
  before(async () => {
    env = await createTestEnv('status');
    const events = syntheticEvents(APPLIED + WAITING, 5);
    await appendRaw(env.redis, env.keys, [...events.slice(0, 20).map(serializeEvent), '{"not": "an event"', ...events.slice(20, APPLIED).map(serializeEvent)]);
    const projector = startCli(['serve', '--role', 'projector'], { ...env.env, PROJECTOR_BLOCK_MS: '100', SOLANA_RPC_URL: 'http://127.0.0.1:1' });
    try {
      const archived = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM events`.execute(env.db)).rows[0]!.n);
      await waitFor(async () => (await archived()) === APPLIED, 60_000, 'the events applied');
      await waitFor(async () => {
        for (const p of PROJECTIONS) if ((await deadLetterCount(env.redis, env.keys, p.name)) !== 1) return false;
        return true;
      }, 30_000, 'the unreadable entry dead-lettered by every projection');
      await waitFor(async () => (await env.db.selectFrom('projection_checkpoints').select('projection').execute()).length === PROJECTIONS.length, 30_000, 'every checkpoint');
    } finally {
      projector.child.kill('SIGTERM');
      await projector.exited;
    }
    await appendRaw(env.redis, env.keys, events.slice(APPLIED).map(serializeEvent));
  });
  after(async () => { await env.close(); });

  it('prints each projection with its checkpoint, lag and dead letters as JSON', async () => {
    const { code, output } = await runCli(['status', '--json'], { ...env.env, SOLANA_RPC_URL: 'http://127.0.0.1:1' });
    expect(code, output).to.equal(0);
    const rows = JSON.parse(output) as ProjectionStatus[];
    expect(rows.map((r) => r.projection)).to.deep.equal(PROJECTIONS.map((p) => p.name));
    const checkpoints = new Map((await env.db.selectFrom('projection_checkpoints').selectAll().execute()).map((c) => [c.projection, c]));
    for (const r of rows) {
      expect(r.checkpoint, r.projection).to.equal(checkpoints.get(r.projection)!.last_stream_id);
      expect(r.checkpoint, r.projection).to.match(/^\d+-\d+$/);
      expect(r, r.projection).to.include({ lag: WAITING, pending: 0, consumers: 1, deadLetters: 1 });
    }
    expect(rows.find((r) => r.projection === 'archive')!.applied).to.equal(String(APPLIED));
  });

  it('prints one line per projection for people', async () => {
    const { code, output } = await runCli(['status'], { ...env.env, SOLANA_RPC_URL: 'http://127.0.0.1:1' });
    expect(code, output).to.equal(0);
    const all = output.trim().split('\n');
    // then the scheduler's own lines (commands/scheduler/report.ts) and the x402 exact fee payers' (commands/x402/exact/report.ts)
    const lines = all.slice(0, PROJECTIONS.length);
    expect(all.slice(PROJECTIONS.length).map((l) => l.split(' ')[0])).to.deep.equal(['scheduler', 'scheduler', 'settler', 'x402']);
    for (const [i, p] of PROJECTIONS.entries()) {
      expect(lines[i]).to.match(new RegExp(`^${p.name}\\s+checkpoint \\d+-\\d+\\s+applied \\d+\\s+lag ${WAITING}\\s+pending 0\\s+consumers 1 dead 1$`));
    }
  });
});
