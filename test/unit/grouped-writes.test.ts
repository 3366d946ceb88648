/**
 * Rows written on a hot path go in one statement while another is in flight, and each caller
 * learns its own row's fate: a failing row fails only its caller.
 */
import { expect } from 'chai';
import { groupedWrites } from '../../infra/postgres/grouped-writes.js';

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

  it('fails only the caller whose row the statement refuses', async () => {
    const write = groupedWrites(async (rows: readonly number[]) => {
      await new Promise((r) => setTimeout(r, 5));
      if (rows.includes(13)) throw new Error('row 13 overlaps');
    }, { inFlight: 1 });
    const results = await Promise.allSettled([1, 2, 13, 4].map((n) => write(n)));
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).to.have.property('message', 'row 13 overlaps');
  });
});
