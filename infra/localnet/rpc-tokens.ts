/**
 * Token reads as a Solana node answers them: getTokenAccountBalance,
 * getTokenAccountsByOwner, getTokenAccountsByDelegate, getTokenSupply, and the
 * `jsonParsed` form of token accounts and mints (program "spl-token", or
 * "spl-token-2022" for Token-2022's).
 */
import type { Chain } from './chain.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './constants.js';
import type { AccountView, StoredAccount } from './program/store.js';
import { configParam, invalidParams, type Params } from './rpc-errors.js';
import { isTokenAccountData, readMint, readTokenAccount, uiTokenAmount, MINT_SIZE } from './spl.js';
import { isTokenProgram } from './token-program.js';

const TOKEN = TOKEN_PROGRAM_ID.toBase58();
const TOKEN_2022 = TOKEN_2022_PROGRAM_ID.toBase58();

/** The `data` of a token program account under jsonParsed, or undefined when it is not one. */
export function parsedTokenData(acc: StoredAccount, view: AccountView): Record<string, unknown> | undefined {
  if (!isTokenProgram(acc.owner)) return undefined;
  const program = acc.owner === TOKEN ? 'spl-token' : 'spl-token-2022';
  if (acc.data.length === MINT_SIZE) {
    const m = readMint(acc.data);
    if (!m) return undefined;
    return {
      program, space: MINT_SIZE,
      parsed: {
        type: 'mint',
        info: {
          decimals: m.decimals, freezeAuthority: m.freezeAuthority?.toBase58() ?? null, isInitialized: true,
          mintAuthority: m.authority?.toBase58() ?? null, supply: m.supply.toString(),
        },
      },
    };
  }
  const t = readTokenAccount(acc.data);
  if (!t) return undefined;
  const decimals = decimalsOf(view, t.mint.toBase58());
  if (decimals === undefined) return undefined;
  const info: Record<string, unknown> = {
    isNative: false, mint: t.mint.toBase58(), owner: t.owner.toBase58(), state: 'initialized', tokenAmount: uiTokenAmount(t.amount, decimals),
  };
  if (t.delegate) {
    info.delegate = t.delegate.toBase58();
    info.delegatedAmount = uiTokenAmount(t.delegatedAmount, decimals);
  }
  // an ATA of Token-2022 carries the ImmutableOwner extension, listed as the node lists it
  if (acc.owner === TOKEN_2022) info.extensions = [{ extension: 'immutableOwner' }];
  return { program, space: acc.data.length, parsed: { type: 'account', info } };
}

function decimalsOf(view: AccountView, mint: string): number | undefined {
  const acc = view.get(mint);
  return acc && isTokenProgram(acc.owner) ? readMint(acc.data)?.decimals : undefined;
}

type AccountJson = (acc: StoredAccount, cfg: Record<string, unknown>) => Record<string, unknown>;

export function tokenMethods(chain: Chain, accountJson: AccountJson, pubkeyParam: (v: unknown, what?: string) => string): Record<string, (p: Params) => unknown> {
  const context = (): { slot: number; apiVersion: string } => ({ slot: chain.slot(), apiVersion: '2.1.21' });
  const byFilter = (field: 'owner' | 'delegate') => (p: Params): unknown => {
    const who = pubkeyParam(p[0]);
    const filter = configParam(p, 1);
    const cfg = configParam(p, 2);
    let mint: string | undefined;
    let program: string;
    if (typeof filter.mint === 'string') {
      mint = pubkeyParam(filter.mint, 'mint');
      if (decimalsOf(chain.store, mint) === undefined) throw invalidParams('could not find mint').withMessage('Invalid param: could not find mint');
      program = chain.store.get(mint)?.owner ?? TOKEN;
    } else if (typeof filter.programId === 'string') {
      program = pubkeyParam(filter.programId, 'programId');
      if (!isTokenProgram(program)) throw invalidParams('unrecognized Token program id').withMessage('Invalid param: unrecognized Token program id');
    } else {
      throw invalidParams('expected {mint} or {programId}');
    }
    const out: { pubkey: string; account: Record<string, unknown> }[] = [];
    for (const [pubkey, acc] of chain.store.entries()) {
      if (acc.owner !== program || !isTokenAccountData(acc.data)) continue;
      const t = readTokenAccount(acc.data);
      const key = field === 'owner' ? t?.owner : t?.delegate;
      if (!t || !key || key.toBase58() !== who || (mint && t.mint.toBase58() !== mint)) continue;
      out.push({ pubkey, account: accountJson(acc, cfg) });
    }
    return { context: context(), value: out };
  };
  return {
    getTokenAccountBalance: (p) => {
      const address = pubkeyParam(p[0]);
      const acc = chain.store.get(address);
      if (!acc) throw invalidParams('could not find account').withMessage('Invalid param: could not find account');
      const t = isTokenProgram(acc.owner) ? readTokenAccount(acc.data) : undefined;
      const decimals = t ? decimalsOf(chain.store, t.mint.toBase58()) : undefined;
      if (!t || decimals === undefined) throw invalidParams('not a Token account').withMessage('Invalid param: not a Token account');
      return { context: context(), value: uiTokenAmount(t.amount, decimals) };
    },
    getTokenSupply: (p) => {
      const address = pubkeyParam(p[0]);
      const acc = chain.store.get(address);
      const m = acc && isTokenProgram(acc.owner) ? readMint(acc.data) : undefined;
      if (!m) throw invalidParams('not a Token mint').withMessage('Invalid param: not a Token mint');
      return { context: context(), value: uiTokenAmount(m.supply, m.decimals) };
    },
    getTokenAccountsByOwner: byFilter('owner'),
    getTokenAccountsByDelegate: byFilter('delegate'),
  };
}
