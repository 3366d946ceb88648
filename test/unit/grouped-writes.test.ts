/**
 * Rows written on a hot path go in one statement while another is in flight, and each caller
 * learns its own row's fate: a failing row fails only its caller.
 */
import { expect } from 'chai';
import { groupedCalls, groupedWrites } from '../../infra/postgres/grouped-writes.js';

describe('grouped writes', () => {
  it('writes an idle path\'s row at once, and rows arriving meanwhile together in the next statement', async () => {
    const statements: number[][] = [];
    const write = groupedWrites(async (rows: readonly number[]) => {
      statements.push([...rows]);
      await new Promise((r) => setTimeout(r, 20));
    }, { inFlight: 1 });
    await Promise.all([1, 2, 3, 4].map((n) => write(n)));
    expect(statements).to.deep.equal([[1], [2, 3, 4]]);
  });

  it('waits for the end of the event loop\'s round when told to, so that the rows of one round go together', async () => {
    const statements: number[][] = [];
    const write = groupedWrites(async (rows: readonly number[]) => {
      statements.push([...rows]);
      await new Promise((r) => setTimeout(r, 20));
    }, { inFlight: 1, round: true });
    // rows asked in one round (one task, as the answers of one Redis pipeline resume their requests) go in one statement
    const first = [1, 2, 3].map((n) => write(n));
    expect(statements, 'nothing sent before the round ends').to.deep.equal([]);
    await new Promise((r) => setImmediate(r));
    expect(statements).to.deep.equal([[1, 2, 3]]);
    // while it is in flight, later rounds' rows queue for the next statement
    const later = [4, 5].map((n) => write(n));
    await new Promise((r) => setImmediate(r));
    const last = write(6);
    await Promise.all([...first, ...later, last]);
    expect(statements).to.deep.equal([[1, 2, 3], [4, 5, 6]]);
  });

  it('fails only the caller whose row the statement refuses', async () => {
    const write = groupedWrites(async (rows: readonly number[]) => {
      await new Promise((r) => setTimeout(r, 5));
      if (rows.includes(13)) throw new Error('row 13 overlaps');
    }, { inFlight: 1 });
    const results = await Promise.allSettled([1, 2, 13, 4].map((n) => write(n)));
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).to.have.property('message', 'row 13 overlaps');
  });

  it('answers each call its own result from its group\'s statement', async () => {
    const statements: number[][] = [];
    const call = groupedCalls(async (rows: readonly number[]) => {
      statements.push([...rows]);
      return (n: number) => n * 10;
    }, { inFlight: 1, round: true });
    expect(await Promise.all([call(1), call(2), call(3)])).to.deep.equal([10, 20, 30]);
    expect(statements).to.deep.equal([[1, 2, 3]]);
  });

  it('writes a refused group\'s rows one by one in the order they were asked, so that of two rows refusing each other the earlier is kept', async () => {
    // rows 1, 2 and 3 stand for overlapping slices of one counter: a row is refused when one it overlaps is written;
    // the middle row's own statement answers first, as a concurrent one may (the order CI once saw)
    const written: number[] = [];
    const write = groupedWrites(async (rows: readonly number[]) => {
      await new Promise((r) => setTimeout(r, rows.length > 1 ? 1 : rows[0] === 2 ? 2 : 15));
      if (rows.length > 1 || rows.some((n) => written.some((w) => Math.abs(w - n) === 1))) throw new Error('overlap');
      written.push(...rows);
    }, { inFlight: 1, round: true });
    const results = await Promise.allSettled([1, 2, 3].map((n) => write(n)));
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(written).to.deep.equal([1, 3]);
  });
});
