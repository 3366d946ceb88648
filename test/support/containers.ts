/**
 * With TEST_CONTAINERS=1, the tests' PostgreSQL and Redis come from containers started
 * through testcontainers (postgres:15 and redis:7: the registry's, or those
 * infra/deploy/images.sh built here), one pair for the whole mocha run. Loaded by
 * .mocharc.json before any test file, it sets DATABASE_URL and REDIS_URL, which every test
 * reads, and removes the containers when the run ends. Without TEST_CONTAINERS it does nothing.
 */
import type { StartedTestContainer } from 'testcontainers';
// before testcontainers loads the npm undici: Node's fetch keeps its own dispatcher (@solana/kit's RPC needs it)
import '../../infra/http/builtin-dispatcher.js';

const started: StartedTestContainer[] = [];

async function startContainers(): Promise<void> {
  // Ryuk, testcontainers' reaper, is one more image to pull: the hook below removes ours
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const { RedisContainer } = await import('@testcontainers/redis');
  const t0 = Date.now();
  const [pg, redis] = await Promise.all([
    new PostgreSqlContainer(process.env['TEST_CONTAINERS_POSTGRES'] ?? 'postgres:15').withLabels({ 'org.tributary.tests': 'true' }).start(),
    new RedisContainer(process.env['TEST_CONTAINERS_REDIS'] ?? 'redis:7').withLabels({ 'org.tributary.tests': 'true' }).start(),
  ]);
  started.push(pg, redis);
  process.env['DATABASE_URL'] = pg.getConnectionUri();
  process.env['REDIS_URL'] = redis.getConnectionUrl();
  process.stderr.write(`testcontainers: PostgreSQL at ${pg.getHost()}:${pg.getPort()}, Redis at ${redis.getHost()}:${redis.getPort()}, started in ${Date.now() - t0} ms\n`);
}

if (process.env['TEST_CONTAINERS'] === '1') await startContainers();

export const mochaHooks = {
  async afterAll(): Promise<void> {
    await Promise.all(started.splice(0).map((c) => c.stop({ remove: true, removeVolumes: true })));
  },
};
