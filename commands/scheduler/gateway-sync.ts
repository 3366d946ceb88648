/**
 * Which served gateways are active: the chain's gateway account names the signer that
 * may execute; a gateway whose signer is the service's delegated one is served, any other
 * waits (pending) until the authority's change_gateway_signer lands. On the localnet the
 * fixture gateways' signers come from the fixtures file.
 */
import { readFile } from 'node:fs/promises';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { text } from '../../src/kernel/domain/event-data.js';
import type { Db } from '../../infra/postgres/database.js';
import type { Logger } from '../../infra/log/logger.js';
import { readProgramAccounts } from '../../infra/solana/accounts.js';
import type { ChainIo } from './chain.js';
import { delegateGateway, findServedGateway, listServedGateways, setGatewayState } from './signers.js';

/** Reads each served gateway's account and sets pending/active; returns the active ones. */
export async function syncGatewayStates(db: Db, io: ChainIo): Promise<string[]> {
  const served = await listServedGateways(db);
  const active: string[] = [];
  for (let i = 0; i < served.length; i += 100) {
    const slice = served.slice(i, i + 100);
    const reads = await readProgramAccounts(io.rpc, slice.map((g) => g.gateway), 'PaymentGateway', { programId: io.programId, commitment: io.commitment });
    for (const [k, g] of slice.entries()) {
      const r = reads[k];
      const onChain = r?.kind === 'found' ? text(r.data, 'signer') : undefined;
      const state = onChain === g.signer ? 'active' : 'pending';
      if (state !== g.state) await setGatewayState(db, g.gateway, state);
      if (state === 'active') active.push(g.gateway);
    }
  }
  return active;
}

interface FixtureGateway { address: string; authority: string; authoritySecretKey?: string; signer?: string; signerSecretKey?: string }

/**
 * The localnet's fixture gateways, served with their fixture signers. A fixtures file
 * from before gateways had signers of their own names none: the authority is then the
 * signer on chain, and its key is the one that executes (the localnet's keys are public).
 */
export async function loadFixtureSigners(db: Db, path: string, encryptionKey: Buffer | undefined, logger: Logger): Promise<number> {
  let gateways: FixtureGateway[];
  try {
    gateways = (JSON.parse(await readFile(path, 'utf8')) as { gateways?: FixtureGateway[] }).gateways ?? [];
  } catch (err) {
    logger.warn({ path, err: (err as Error).message }, 'no localnet fixtures; the fixture gateways are not served');
    return 0;
  }
  let n = 0;
  for (const g of gateways) {
    const secret = g.signerSecretKey ?? g.authoritySecretKey;
    if (!secret) continue;
    const keypair = Keypair.fromSecretKey(bs58.decode(secret));
    const existing = await findServedGateway(db, g.address);
    if (existing?.state === 'stopped' || existing?.signer === keypair.publicKey.toBase58()) continue;
    await delegateGateway(db, { gateway: g.address, authority: g.authority, encryptionKey, source: 'fixtures', keypair });
    n += 1;
  }
  return n;
}
