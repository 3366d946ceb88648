/** Transaction reads: getSignaturesForAddress, getTransaction, getSignatureStatuses. */
import bs58 from 'bs58';
import type { Chain, TxRecord } from './chain.js';
import { pubkeyParam } from './rpc-accounts.js';
import {
  configParam, invalidParams, optionalNumber, optionalString, RpcError, stringParam,
  UNSUPPORTED_TRANSACTION_VERSION, type Params,
} from './rpc-errors.js';
import { JsonText } from './rpc-json.js';

/** The transactions whose getTransaction answers a localnet keeps rendered (see renderedAnswers). */
const RENDERED_KEPT = 20_000;

/**
 * getTransaction's answers of one chain, by transaction, then encoding and version flag. A
 * landed record never changes, so each is rendered once (its instructions' base58 and the
 * whole text) and served as text after that. Only the transactions rendered last are
 * kept: the indexer reads each one soon after it lands, and a soak's hours of history
 * would otherwise hold a second copy of every transaction, some 4 KB each.
 */
export function renderedAnswers(kept = RENDERED_KEPT): (tx: TxRecord, encoding: string, withVersion: boolean) => JsonText {
  const rendered = new Map<TxRecord, Map<string, JsonText>>();
  return (tx, encoding, withVersion) => {
    const key = withVersion ? `${encoding}+v` : encoding;
    let byKey = rendered.get(tx);
    if (!byKey) {
      rendered.set(tx, (byKey = new Map()));
      // the first rendered of those kept goes (a Map iterates in insertion order)
      if (rendered.size > kept) rendered.delete(rendered.keys().next().value as TxRecord);
    }
    let text = byKey.get(key);
    if (!text) byKey.set(key, (text = new JsonText(JSON.stringify(transactionJson(tx, encoding, withVersion)))));
    return text;
  };
}

function messageJson(tx: TxRecord): Record<string, unknown> {
  const m = tx.message;
  const json: Record<string, unknown> = {
    accountKeys: tx.accountKeys,
    header: m.header,
    instructions: m.compiledInstructions.map((ix) => ({
      accounts: ix.accountKeyIndexes, data: bs58.encode(ix.data), programIdIndex: ix.programIdIndex, stackHeight: null,
    })),
    recentBlockhash: m.recentBlockhash,
  };
  if (tx.version === 0) json.addressTableLookups = [];
  return json;
}

function transactionJson(tx: TxRecord, encoding: string, withVersion: boolean): Record<string, unknown> {
  const transaction = encoding === 'json'
    ? { signatures: tx.signatures, message: messageJson(tx) }
    : encoding === 'base64' ? [tx.wire().toString('base64'), 'base64'] : [bs58.encode(tx.wire()), 'base58'];
  const out: Record<string, unknown> = {
    slot: tx.slot,
    blockTime: tx.blockTime,
    transaction,
    meta: {
      err: tx.err,
      status: tx.err === null ? { Ok: null } : { Err: tx.err },
      fee: tx.fee,
      preBalances: tx.preBalances,
      postBalances: tx.postBalances,
      innerInstructions: tx.innerInstructions,
      logMessages: tx.logs,
      preTokenBalances: tx.preTokenBalances ?? [],
      postTokenBalances: tx.postTokenBalances ?? [],
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: tx.unitsConsumed,
    },
  };
  if (withVersion) out.version = tx.version;
  return out;
}

/** Index of the first entry with seq >= target in a list ordered by seq. */
function lowerBound(list: readonly TxRecord[], seq: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid]?.seq ?? 0) < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `forgets`: the hostile chain's status cache, when a status past it is not served without history search */
export function transactionMethods(
  chain: Chain, forgets?: (signature: string, slot: number) => boolean,
): Record<string, (p: Params) => unknown> {
  const transactionText = renderedAnswers();
  const status = (tx: TxRecord): Record<string, unknown> => {
    const confirmationStatus = chain.commitmentOf(tx.slot);
    return {
      slot: tx.slot, confirmations: confirmationStatus === 'finalized' ? null : chain.slot() - tx.slot,
      err: tx.err, status: tx.err === null ? { Ok: null } : { Err: tx.err }, confirmationStatus,
    };
  };
  return {
    getSignaturesForAddress: (p) => {
      const address = pubkeyParam(p[0], 'address');
      const cfg = configParam(p, 1);
      const limit = optionalNumber(cfg, 'limit') ?? 1000;
      if (limit < 1 || limit > 1000) throw invalidParams('Invalid limit; max 1000');
      const list = chain.mentioning(address);
      const before = optionalString(cfg, 'before');
      const until = optionalString(cfg, 'until');
      let end = list.length; // exclusive; walk newest first from end - 1
      if (before !== undefined) {
        const tx = chain.transaction(before);
        end = tx ? lowerBound(list, tx.seq) : 0;
      }
      const untilTx = until === undefined ? undefined : chain.transaction(until);
      const untilAt = untilTx ? lowerBound(list, untilTx.seq) : -1;
      // entries strictly newer than `until`
      const stop = untilTx ? (list[untilAt]?.signature === until ? untilAt + 1 : untilAt) : 0;
      const out: Record<string, unknown>[] = [];
      for (let i = end - 1; i >= stop && out.length < limit; i -= 1) {
        const tx = list[i];
        if (!tx) break;
        out.push({
          signature: tx.signature, slot: tx.slot, err: tx.err, memo: null, blockTime: tx.blockTime,
          confirmationStatus: chain.commitmentOf(tx.slot),
        });
      }
      return out;
    },
    getTransaction: (p) => {
      const signature = stringParam(p, 0, 'signature');
      const cfg = typeof p[1] === 'string' ? { encoding: p[1] } : configParam(p, 1);
      const encoding = optionalString(cfg, 'encoding') ?? 'json';
      if (!['json', 'base64', 'base58'].includes(encoding)) throw invalidParams(`unsupported encoding: ${encoding}`);
      const maxVersion = optionalNumber(cfg, 'maxSupportedTransactionVersion');
      const tx = chain.transaction(signature);
      if (!tx) return null;
      if (tx.version === 0 && maxVersion === undefined) {
        throw new RpcError(UNSUPPORTED_TRANSACTION_VERSION,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0');
      }
      return transactionText(tx, encoding, maxVersion !== undefined);
    },
    getSignatureStatuses: (p) => {
      const list = p[0];
      if (!Array.isArray(list)) throw invalidParams('expected an array of signatures');
      if (list.length > 256) throw invalidParams('Too many inputs provided; max 256');
      const forget = configParam(p, 1).searchTransactionHistory === true ? undefined : forgets;
      return {
        context: { slot: chain.slot(), apiVersion: '2.1.21' },
        value: list.map((s) => {
          const tx = typeof s === 'string' ? chain.transaction(s) : undefined;
          return tx && !forget?.(tx.signature, tx.slot) ? status(tx) : null;
        }),
      };
    },
  };
}
