/**
 * A DATABASE_URL without a user name connects as the OS user when the environment has no
 * USER (and no PGUSER), as libpq does: a child process without them, on the machine's
 * Postgres.
 */
import { execFile } from 'node:child_process';
import { userInfo } from 'node:os';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const base = new URL(process.env['DATABASE_URL'] ?? 'postgres://root@127.0.0.1:5432/postgres');

const script = `
import { sql } from 'kysely';
import { createDb } from './infra/postgres/database.js';
const db = createDb(process.argv[1]);
const r = await sql\`SELECT current_user AS u\`.execute(db);
console.log(JSON.stringify(r.rows[0]));
await db.destroy();
`;

describe('DATABASE_URL without a user name', () => {
  it('connects as the OS user when the environment has no USER', async function () {
    // only meaningful where Postgres has a role for the OS user, as on this kind of machine
    if (base.username !== '' && base.username !== userInfo().username) this.skip();
    const url = new URL(base);
    url.username = '';
    const env = { ...process.env };
    delete env['USER'];
    delete env['PGUSER'];
    delete env['LOGNAME'];
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, url.toString()], { env, cwd: process.cwd() });
    expect(JSON.parse(stdout.trim())).to.deep.equal({ u: userInfo().username });
  });
});
