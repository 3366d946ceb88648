/**
 * GET /v1/{payment,composable}-policies/{address}: the policy as the chain holds it, read
 * through the RPC and decoded with the IDL's account layout; what the account lacks (the
 * user payment's owner and mint, the last payment) comes from the read models, or from
 * the user payment's own account. When the chain does not answer, the read model answers
 * instead and says so (`source: "read-model", chainUnavailable: true`); when it has
 * nothing either, 503.
 */
import type { Db } from '../../infra/postgres/database.js';
import { readProgramAccount, type AccountReadOptions } from '../../infra/solana/accounts.js';
import { RpcResponseError, RpcUnavailableError, type RpcClient } from '../../infra/solana/rpc-client.js';
import {
  factsFromComposableAccount, factsFromPaymentAccount, normalizePolicy, type AccountExtras, type NormalizedPolicy, type PolicyKind,
} from '../../src/kernel/domain/policy.js';
import { notFound, upstreamUnavailable } from '../../src/kernel/http/errors.js';
import type { Logger } from '../../infra/log/logger.js';
import { text } from '../../src/kernel/domain/event-data.js';
import { findPolicy, findUserPayment, rowToFacts } from './policy-rows.js';

export interface ChainReadDeps {
  db: Db;
  rpc: RpcClient;
  account: AccountReadOptions;
  logger: Logger;
}

const ACCOUNT = { payment: 'PaymentPolicy', composable: 'ComposablePolicy' } as const;
const WHAT = { payment: 'payment policy', composable: 'composable policy' } as const;

const isChainDown = (e: unknown): boolean => e instanceof RpcUnavailableError || e instanceof RpcResponseError;

async function extrasFor(deps: ChainReadDeps, kind: PolicyKind, address: string, userPayment: string): Promise<AccountExtras> {
  const row = await findPolicy(deps.db, kind, address);
  const extras: AccountExtras = {
    owner: row?.owner ?? null,
    tokenMint: row?.token_mint ?? null,
    lastPaymentAt: row?.last_payment_at ?? null,
    lastPaymentSignature: row?.last_payment_signature ?? null,
  };
  if (extras.owner !== null) return extras;
  const up = await findUserPayment(deps.db, userPayment);
  if (up) return { ...extras, owner: up.owner, tokenMint: up.token_mint };
  // the owner and mint of a user payment never change (they are its address's seeds)
  try {
    const acc = await readProgramAccount(deps.rpc, userPayment, 'UserPayment', deps.account);
    if (acc.kind === 'found') return { ...extras, owner: text(acc.data, 'owner'), tokenMint: text(acc.data, 'token_mint') };
  } catch (err) {
    if (!isChainDown(err)) throw err;
  }
  return extras;
}

export async function readPolicy(deps: ChainReadDeps, kind: PolicyKind, address: string): Promise<NormalizedPolicy> {
  let read;
  try {
    read = await readProgramAccount(deps.rpc, address, ACCOUNT[kind], deps.account);
  } catch (err) {
    if (!isChainDown(err)) throw err;
    deps.logger.warn({ err: (err as Error).message, address }, 'chain unavailable; answering from the read model');
    const row = await findPolicy(deps.db, kind, address);
    if (!row) throw upstreamUnavailable(`the chain is unavailable and the read model has no ${WHAT[kind]} at ${address}`);
    if (row.deleted) throw notFound(`no ${WHAT[kind]} at ${address} (closed; the chain is unavailable, answered from the read model)`);
    return { ...normalizePolicy(rowToFacts(kind, row), 'read-model'), chainUnavailable: true };
  }
  if (read.kind === 'missing') throw notFound(`no ${WHAT[kind]} at ${address}`);
  if (read.kind === 'mismatch') throw notFound(`${address} is not a ${WHAT[kind]} account`);
  const userPayment = text(read.data, 'user_payment');
  const extras = await extrasFor(deps, kind, address, userPayment);
  const facts = kind === 'payment' ? factsFromPaymentAccount(address, read.data, extras) : factsFromComposableAccount(address, read.data, extras);
  return normalizePolicy(facts, 'chain');
}
