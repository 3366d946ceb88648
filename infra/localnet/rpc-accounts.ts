/** Account reads: getAccountInfo, getMultipleAccounts, getProgramAccounts, getBalance. */
import { PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import type { Chain } from './chain.js';
import type { AccountView, StoredAccount } from './program/store.js';
import { parsedTokenData, tokenMethods } from './rpc-tokens.js';
import { configParam, invalidParams, optionalString, stringParam, type Params } from './rpc-errors.js';

/** Solana reports rentEpoch u64::MAX for rent-exempt accounts. */
const RENT_EPOCH = 18446744073709551615;

export function pubkeyParam(value: unknown, what = 'pubkey'): string {
  if (typeof value !== 'string') throw invalidParams(`${what} must be a base58 string`);
  try {
    return new PublicKey(value).toBase58();
  } catch {
    throw invalidParams(`Invalid ${what}: ${value}`);
  }
}

function encodeData(data: Buffer, cfg: Record<string, unknown>): [string, string] {
  const encoding = optionalString(cfg, 'encoding') ?? 'base58';
  const slice = cfg.dataSlice as { offset?: number; length?: number } | undefined;
  const bytes = slice ? data.subarray(slice.offset ?? 0, (slice.offset ?? 0) + (slice.length ?? data.length)) : data;
  if (encoding === 'base64' || encoding === 'jsonParsed') return [bytes.toString('base64'), 'base64'];
  if (encoding === 'base58' || encoding === 'binary') return [bs58.encode(bytes), 'base58'];
  throw invalidParams(`unsupported encoding: ${encoding}`);
}

/** An account as the node renders it; under jsonParsed, token accounts and mints come parsed (others as base64). */
export function accountJson(acc: StoredAccount, cfg: Record<string, unknown>, view?: AccountView): Record<string, unknown> {
  const parsed = view && cfg.encoding === 'jsonParsed' && !cfg.dataSlice ? parsedTokenData(acc, view) : undefined;
  return {
    data: parsed ?? encodeData(acc.data, cfg), executable: acc.executable, lamports: acc.lamports, owner: acc.owner,
    rentEpoch: RENT_EPOCH, space: acc.data.length,
  };
}

type Filter = (data: Buffer) => boolean;

function parseFilter(f: unknown): Filter {
  const o = f as { dataSize?: unknown; memcmp?: { offset?: unknown; bytes?: unknown; encoding?: unknown } };
  if (typeof o?.dataSize === 'number') {
    const size = o.dataSize;
    return (d) => d.length === size;
  }
  const m = o?.memcmp;
  if (m && typeof m.offset === 'number' && typeof m.bytes === 'string') {
    const offset = m.offset;
    let bytes: Buffer;
    try {
      bytes = m.encoding === 'base64' ? Buffer.from(m.bytes, 'base64') : Buffer.from(bs58.decode(m.bytes));
    } catch {
      throw invalidParams('memcmp bytes are not valid for their encoding');
    }
    return (d) => d.length >= offset + bytes.length && d.subarray(offset, offset + bytes.length).equals(bytes);
  }
  throw invalidParams('filters must be {dataSize} or {memcmp: {offset, bytes, encoding?}}');
}

export function accountMethods(chain: Chain): Record<string, (p: Params) => unknown> {
  const context = (): { slot: number; apiVersion: string } => ({ slot: chain.slot(), apiVersion: '2.1.21' });
  const one = (address: string, cfg: Record<string, unknown>): Record<string, unknown> | null => {
    const acc = chain.store.get(address);
    return acc ? accountJson(acc, cfg, chain.store) : null;
  };
  return {
    getAccountInfo: (p) => ({ context: context(), value: one(pubkeyParam(p[0]), configParam(p, 1)) }),
    getMultipleAccounts: (p) => {
      const list = p[0];
      if (!Array.isArray(list)) throw invalidParams('expected an array of pubkeys');
      if (list.length > 100) throw invalidParams('Too many inputs provided; max 100');
      const cfg = configParam(p, 1);
      return { context: context(), value: list.map((a) => one(pubkeyParam(a), cfg)) };
    },
    getBalance: (p) => ({ context: context(), value: chain.store.get(pubkeyParam(p[0]))?.lamports ?? 0 }),
    getProgramAccounts: (p) => {
      const owner = pubkeyParam(stringParam(p, 0, 'program id'), 'program id');
      const cfg = configParam(p, 1);
      const filters = Array.isArray(cfg.filters) ? cfg.filters.map(parseFilter) : [];
      const out: { pubkey: string; account: Record<string, unknown> }[] = [];
      for (const [pubkey, acc] of chain.store.entries()) {
        if (acc.owner !== owner || !filters.every((f) => f(acc.data))) continue;
        out.push({ pubkey, account: accountJson(acc, cfg, chain.store) });
      }
      return cfg.withContext === true ? { context: context(), value: out } : out;
    },
    ...tokenMethods(chain, (acc, cfg) => accountJson(acc, cfg, chain.store), pubkeyParam),
  };
}
