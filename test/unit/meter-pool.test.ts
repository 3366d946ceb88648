/**
 * The rows-recorded-ahead pool's own rules (commands/x402/meter-pool.ts), over a counter kept in
 * memory: when a block is counted, what size, when a request may take a row of it, and that every
 * row no request took goes back. The ledger and Redis sides are proven against the real ones in
 * test/integration/x402-meter-ahead.test.ts.
 */
import { expect } from 'chai';
import { createMeterAhead, giveBackRuns, type AheadCounter, type AheadMiss, type AheadSlot, type MeterAhead } from '../../commands/x402/meter-pool.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** a take as a caller makes it: a row, or undefined once its metering by the script is over */
const take = (ahead: MeterAhead, c: AheadCounter): AheadSlot | undefined => {
  const t = ahead.take(c);
  if (t && 'requestId' in t) return t;
  t?.waiting();
  return undefined;
};

/** a counter of `chunk`s under `limit`, counting and writing blocks at once */
function memoryCounter(limit: bigint, chunk = 10n) {
  const s = { used: 0n, blocks: [] as bigint[], given: [] as { ids: number; end: bigint }[], limit, accountLimit: undefined as bigint | undefined, refuse: 0, gate: undefined as Promise<void> | undefined };
  const counter = (): AheadCounter => ({
    id: 'c', chunk, limit: s.limit, ...(s.accountLimit !== undefined ? { accountLimit: s.accountLimit } : {}),
    async count(n, room) {
      if (s.gate) await s.gate;
      // `refuse`: that many next blocks refused as another node's count would refuse them (the counts read show room)
      if (s.refuse > 0) { s.refuse -= 1; return { used: s.used, owed: s.used }; }
      if (s.used + n * chunk > s.limit - room) return { used: s.used, owed: s.used };
      const start = s.used;
      s.used += n * chunk;
      s.blocks.push(n);
      return Promise.resolve({ start, accountStart: 0n, usedAfter: s.used, owedAfter: s.used });
    },
    record: (ids) => Promise.resolve(ids.map(() => ({ status: 'fulfilled' as const, value: undefined }))),
    failed: () => Promise.resolve(),
    giveBack(ids, end) { s.given.push({ ids: ids.length, end }); s.used -= BigInt(ids.length) * chunk; return Promise.resolve(); },
  });
  return { s, counter };
}

describe('meter pool: rows recorded ahead for a busy counter', () => {
  it('starts once a counter is busy, hands out its rows in order, and gives back the unused tail when idle', async () => {
    const ahead = createMeterAhead({ max: 64 });
    const { s, counter } = memoryCounter(1_000_000n);
    for (let i = 0; i < 7; i += 1) expect(take(ahead, counter())).to.equal(undefined);
    expect(s.blocks, 'a block before the counter was busy').to.deep.equal([]);
    expect(take(ahead, counter())).to.equal(undefined); // the 8th asks for one: 2 × 8 rows
    await sleep(0);
    expect(s.blocks).to.deep.equal([16n]);
    const a = take(ahead, counter())!;
    const b = take(ahead, counter())!;
    expect(a.used).to.equal(10n);
    expect(b.used).to.equal(20n);
    expect(a.requestId).to.not.equal(b.requestId);
    await sleep(80);
    // 14 rows no request took: one give-back of the block's tail
    expect(s.given).to.deep.equal([{ ids: 14, end: 160n }]);
    expect(s.used).to.equal(20n);
    expect(ahead.stats()).to.deep.equal({ blocks: 1, taken: 2, givenBack: 14 });
  });

  it('starts as soon as several requests of a counter wait for the script at once, however slow they come', async () => {
    const ahead = createMeterAhead({ max: 64 });
    const { s, counter } = memoryCounter(1_000_000n);
    const misses: AheadMiss[] = [];
    for (let i = 0; i < 4; i += 1) { misses.push(ahead.take(counter()) as AheadMiss); await sleep(15); }
    ahead.take(counter());
    await sleep(0);
    expect(s.blocks).to.deep.equal([10n]); // twice the five requests seen
    for (const m of misses) m.waiting();
    await ahead.release();
  });

  it('takes no row once the block no longer fits this request\'s limits, and gives it back', async () => {
    const ahead = createMeterAhead({ max: 64 });
    const { s, counter } = memoryCounter(1_000_000n);
    for (let i = 0; i < 8; i += 1) take(ahead, counter());
    await sleep(0);
    expect(take(ahead, counter())).to.not.equal(undefined);
    s.limit = 100n; // the account's funds fell below the block's 160
    expect(take(ahead, counter())).to.equal(undefined);
    await sleep(0);
    expect(s.given).to.deep.equal([{ ids: 15, end: 160n }]);
  });

  it('counts no block without room for four of its size, and asks a refused one again at once at the size that leaves that room', async () => {
    const ahead = createMeterAhead({ max: 64 });
    const small = memoryCounter(300n); // 30 chunks: a block of 8 needs 32
    for (let i = 0; i < 20; i += 1) expect(take(ahead, small.counter())).to.equal(undefined);
    await sleep(0);
    expect(small.s.blocks).to.deep.equal([]);
    const other = createMeterAhead({ max: 64 });
    const busy = memoryCounter(10_000n);
    busy.s.used = 9_500n; // room for 50 chunks: a block of 16 (needing 64) is refused, one of 12 (48) fits
    for (let i = 0; i < 8; i += 1) take(other, busy.counter());
    await sleep(0);
    expect(busy.s.blocks).to.deep.equal([12n]);
    await other.release();
  });

  it('halves a block refused twice to a whole number of rows, whatever the limit (a fraction threw and killed the node)', async () => {
    const ahead = createMeterAhead({ max: 64 });
    const busy = memoryCounter(1_090n); // a quarter of the limit: 27 rows
    let open: () => void = () => undefined;
    busy.s.gate = new Promise((r) => { open = r; });
    for (let i = 0; i < 38; i += 1) take(ahead, busy.counter()); // a block of 16 asked at the 8th, 30 more meanwhile
    busy.s.gate = undefined;
    open();
    await sleep(0);
    expect(busy.s.blocks).to.deep.equal([16n]);
    // asks for 2 × 31, 27 at most; refused, then 23 (what the counts read leave room for) refused too: 11 from then on
    busy.s.refuse = 2;
    take(ahead, busy.counter());
    await sleep(0);
    expect(busy.s.blocks).to.deep.equal([16n]);
    const until = Date.now() + 1_100;
    while (Date.now() < until) { for (let i = 0; i < 8; i += 1) take(ahead, busy.counter()); await sleep(5); }
    await sleep(0);
    expect(busy.s.blocks[1], `blocks ${busy.s.blocks.join(', ')}`).to.equal(11n);
    await ahead.release();
  });

  it('gives back the rows it deleted, each run as one slice, and keeps counted those it could not delete', async () => {
    const given: [bigint, bigint][] = [];
    const gone = new Set(['r0', 'r1', 'r3', 'r4', 'r5']);
    const all = await giveBackRuns(['r0', 'r1', 'r2', 'r3', 'r4', 'r5'], 600n, 10n, (id) => Promise.resolve(gone.has(id)),
      (end, amount) => { given.push([end, amount]); return Promise.resolve(); });
    // r2 (the slice [560, 570)) is left: [570, 600) then [540, 560)
    expect(given).to.deep.equal([[600n, 30n], [560n, 20n]]);
    expect(all).to.equal(false);
  });

  it('gives a block a fill brings back after the node began stopping straight back', async () => {
    const ahead = createMeterAhead({ max: 64 });
    const { s, counter } = memoryCounter(1_000_000n);
    let recorded: () => void = () => undefined;
    const slow = (): AheadCounter => ({ ...counter(), record: (ids) => new Promise((r) => { recorded = () => r(ids.map(() => ({ status: 'fulfilled' as const, value: undefined }))); }) });
    for (let i = 0; i < 8; i += 1) take(ahead, slow());
    await sleep(0);
    const stopping = ahead.release();
    recorded();
    await stopping;
    expect(s.given).to.deep.equal([{ ids: 16, end: 160n }]);
    expect(take(ahead, counter()), 'a row taken from a node stopped').to.equal(undefined);
  });

  it('gives every unused row back when the node stops, and none when it holds none', async () => {
    const ahead = createMeterAhead({ max: 64 });
    const { s, counter } = memoryCounter(1_000_000n);
    for (let i = 0; i < 8; i += 1) take(ahead, counter());
    await sleep(0);
    take(ahead, counter());
    await ahead.release();
    expect(s.given).to.deep.equal([{ ids: 15, end: 160n }]);
    expect(await ahead.releaseCounter('c')).to.equal(false);
  });
});
