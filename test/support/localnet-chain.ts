/**
 * An in-process localnet chain with a controllable clock, for tests of the emulated
 * program's rules: genesis as `tributary localnet` makes it, and helpers to land a
 * transaction and read token balances and delegations.
 */
import { PublicKey, type Keypair, type TransactionInstruction } from '@solana/web3.js';
import BN from 'bn.js';
import { decodeAccount } from '../../infra/localnet/program/encoding.js';
import { createChain, type Chain } from '../../infra/localnet/chain.js';
import { createGenesisAccounts, deriveActors, runGenesisTransactions, type Actors } from '../../infra/localnet/genesis.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';
import { readTokenAccount, type TokenAccount } from '../../infra/localnet/spl.js';
import { submitTransaction } from '../../infra/localnet/submit.js';
import { signedTransaction } from '../../infra/localnet/transactions.js';

export const USDC = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');

export interface Landed { ok: boolean; logs: string[]; err: unknown; events: string[] }

export interface TestChain {
  chain: Chain;
  actors: Actors;
  /** move the block clock to a unix second and produce a slot at it */
  setTime(unix: number): void;
  now(): number;
  land(payer: Keypair, ixs: TransactionInstruction[], signers?: Keypair[]): Landed;
  token(owner: PublicKey, mint?: PublicKey): TokenAccount | undefined;
  balance(owner: PublicKey, mint?: PublicKey): bigint;
}

export function startTestChain(seed: string, startUnix = 1_800_000_000): TestChain {
  let ms = startUnix * 1000;
  const chain = createChain(seed, () => ms);
  const actors = deriveActors(seed);
  createGenesisAccounts(chain, actors);
  runGenesisTransactions(chain, actors);
  const token = (owner: PublicKey, mint = USDC): TokenAccount | undefined => {
    const acc = chain.store.get(pdas.associatedToken(owner, mint).toBase58());
    return acc ? readTokenAccount(acc.data) : undefined;
  };
  return {
    chain,
    actors,
    setTime: (unix) => {
      ms = unix * 1000;
      chain.advanceSlot();
    },
    now: () => chain.blockTime(),
    land: (payer, ixs, signers = []) => {
      // a fresh blockhash each time, so that the same instructions twice are two transactions
      chain.advanceSlot();
      const tx = signedTransaction(payer, signers, ixs, chain.latestBlockhash().blockhash);
      const out = submitTransaction(chain, tx, { verifySignatures: true, commit: true });
      if (out.kind !== 'executed') throw new Error(`transaction rejected: ${out.reason}`);
      return { ok: out.result.err === null, logs: out.result.logs, err: out.result.err, events: out.record?.events.map((e) => e.name) ?? [] };
    },
    token,
    balance: (owner, mint = USDC) => token(owner, mint)?.amount ?? 0n,
  };
}

/** The program error a failed transaction's logs name (Anchor's "Error Code: X."). */
export function errorName(l: Landed): string | undefined {
  for (const line of l.logs) {
    const m = /Error Code: (\w+)\./.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

export interface PolicySetup { userPayment: PublicKey; policy: PublicKey }

/** create_user_payment (when missing) + create_payment_policy for `user` on a gateway. */
export function createPolicyIxs(
  tc: TestChain, user: PublicKey, gateway: PublicKey, recipient: PublicKey, policyType: unknown, mint = USDC,
): PolicySetup & { ixs: TransactionInstruction[] } {
  const userPayment = pdas.userPayment(user, mint);
  const existing = tc.chain.store.get(userPayment.toBase58());
  const ixs: TransactionInstruction[] = [];
  const count = existing ? (decodeAccount('UserPayment', existing.data)?.created_policies_count ?? 0) : 0;
  if (!existing) {
    ixs.push(tributaryIx('create_user_payment', {
      owner: user, user_payment: userPayment, token_account: pdas.associatedToken(user, mint), token_mint: mint, config: pdas.config(), fee_payer: user,
    }));
  }
  const policy = pdas.paymentPolicy(userPayment, count + 1);
  ixs.push(tributaryIx('create_payment_policy', {
    user, user_payment: userPayment, recipient, token_mint: mint, gateway, config: pdas.config(), payment_policy: policy, fee_payer: user,
  }, { policy_type: policyType, memo: new Array<number>(64).fill(0) }));
  return { userPayment, policy, ixs };
}

/** execute_payment with the fixture layout: every token account the owner's ATA of the mint. */
export function executeIx(
  tc: TestChain, o: { caller: PublicKey; policy: PublicKey; userPayment: PublicKey; user: PublicKey; gateway: PublicKey; recipient: PublicKey;
    gatewayFeeRecipient: PublicKey; amount?: bigint | null; remaining?: PublicKey[]; mint?: PublicKey },
): TransactionInstruction {
  const mint = o.mint ?? USDC;
  const ata = (w: PublicKey): PublicKey => pdas.associatedToken(w, mint);
  return tributaryIx('execute_payment', {
    fee_payer: o.caller, payments_delegate: pdas.paymentsDelegate(), payment_policy: o.policy, user_payment: o.userPayment,
    gateway: o.gateway, config: pdas.config(), user_token_account: ata(o.user), mint, recipient_token_account: ata(o.recipient),
    gateway_fee_account: ata(o.gatewayFeeRecipient), protocol_fee_account: ata(tc.actors.admin.publicKey),
  }, { payment_amount: o.amount === undefined || o.amount === null ? null : new BN(o.amount.toString()) }, {
    remaining: (o.remaining ?? []).map((pubkey) => ({ pubkey, isSigner: false, isWritable: true })),
  });
}
