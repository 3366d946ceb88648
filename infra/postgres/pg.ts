/**
 * The pg driver as every part of the service uses it. Imported from here rather than
 * from 'pg', so these settings hold for pools and single clients alike:
 *   - int8 and numeric arrive as strings: amounts are u64 and must not pass through a double;
 *   - a DATABASE_URL without a user name connects as PGUSER, else as the OS user, as libpq
 *     does. pg alone falls back to $USER, and fails where the environment has none (a
 *     container, a service manager).
 */
import { userInfo } from 'node:os';
import pg from 'pg';

pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);

if (!pg.defaults.user) {
  try {
    pg.defaults.user = userInfo().username;
  } catch {
    // no passwd entry for this uid: pg reports the missing user name when it connects
  }
}

export default pg;
