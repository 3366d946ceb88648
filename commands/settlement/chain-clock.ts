/**
 * The chain's clock: the program judges a charge by Clock::unix_timestamp, the time of the
 * block it lands in, which lags wall time (by seconds on a real cluster). A charge planned
 * with the local clock could count on a period that has not rolled over yet on chain, or an
 * expiry that has not passed there. The block time of the latest slot at the commitment is
 * the clock the next charge will be judged by (or a little before it).
 */
import type { ChainIo } from '../scheduler/chain.js';

/** Unix seconds of the chain's latest block at the commitment; the local clock when the node has no time for it. */
export async function chainSeconds(io: ChainIo, localMs: number): Promise<number> {
  const slot = await io.rpc.call<number>('getSlot', [{ commitment: io.commitment }]);
  const time = await io.rpc.call<number | null>('getBlockTime', [slot]).catch(() => null);
  return typeof time === 'number' ? time : Math.floor(localMs / 1000);
}
