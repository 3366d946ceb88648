/**
 * One active runner per projection across every process: a session-level Postgres
 * advisory lock, held on a connection of its own. Batches are then applied in stream
 * order (two consumers of one group would interleave them, and order-sensitive folds such
 * as status history would drift from a replay). Other processes stand by and take over
 * within a second of the holder's death: Postgres drops the lock with the session.
 */
import pg from '../../infra/postgres/pg.js';

export interface Leadership {
  /** false once the lock's connection is gone: the caller must stop consuming */
  held(): boolean;
  release(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function acquireLeadership(
  dbUrl: string, projection: string, shouldStop: () => boolean, retryMs = 1000,
): Promise<Leadership | undefined> {
  while (!shouldStop()) {
    const client = new pg.Client({ connectionString: dbUrl, application_name: `tributary-standby-${projection}`.slice(0, 63), keepAlive: true });
    let lost = false;
    client.on('error', () => { lost = true; });
    client.on('end', () => { lost = true; });
    try {
      await client.connect();
      const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`projection-leader:${projection}`]);
      if (r.rows[0]?.ok === true) {
        // named only once it leads, so operators (and tests) see one leader per projection
        await client.query(`SET application_name = '${`tributary-leader-${projection}`.slice(0, 63).replace(/'/g, "''")}'`);
        return {
          held: () => !lost,
          async release() {
            lost = true;
            await client.end().catch(() => undefined);
          },
        };
      }
    } catch {
      // Postgres unreachable: try again below.
    }
    await client.end().catch(() => undefined);
    await sleep(retryMs);
  }
  return undefined;
}
