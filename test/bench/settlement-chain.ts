/**
 * The settlement bench's chain, in a worker thread of its own (a chain is not the
 * scheduler's process): a localnet with no workload, and `count` monthly subscriptions
 * on the first fixture gateway, each of its own payer, all falling due at one instant.
 *
 * The policies are made through the localnet's fast path: one payer's
 * create_user_payment + approve + create_payment_policy runs in-process, and its accounts
 * are cloned into the account store for every other payer (the payers sign nothing
 * later). Their due date is then set to the instant asked for, so that creating them may take as
 * long as it takes. Everything executed afterwards goes through the localnet's RPC.
 */
import { randomBytes } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { PublicKey, VersionedTransaction } from '@solana/web3.js';
import { startLocalnet } from '../../infra/localnet/index.js';
import { SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from '../../infra/localnet/constants.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { bumpOf, pdas } from '../../infra/localnet/keys.js';
import { bn, fixedText, zeros, type PaymentPolicy, type UserPayment } from '../../infra/localnet/program/model.js';
import { rentExempt } from '../../infra/localnet/program/encoding.js';
import { readProgramAccount, writeProgramAccount } from '../../infra/localnet/program/store.js';
import { encodeTokenAccount, TOKEN_ACCOUNT_SIZE } from '../../infra/localnet/spl.js';
import { submitTransaction } from '../../infra/localnet/submit.js';
import { compileV0 } from '../../infra/localnet/transactions.js';
import { approveIx, U64_MAX } from '../../src/kernel/domain/spl-token.js';

export interface ChainRequest { seed: string }
export type ChainCommand = { kind: 'create'; count: number; tag: string; amount: string } | { kind: 'due'; policies: string[]; dueAt: number } | { kind: 'close' };
export interface CreatedPolicy { address: string; userPayment: string; owner: string; recipient: string; memo: string }

export const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const FAR = 4_000_000_000;

async function main(): Promise<void> {
  const { seed } = workerData as ChainRequest;
  const ln = await startLocalnet({ port: 0, seed, rate: 0 });
  const gw = ln.fixtures.gateways[0]!;
  const gateway = new PublicKey(gw.address);
  const recipient = new PublicKey(gw.authority);
  const mint = new PublicKey(USDC);
  const store = ln.chain.store;

  const fund = (owner: PublicKey, delegate: PublicKey | null): PublicKey => {
    const ata = pdas.associatedToken(owner, mint);
    store.set(owner.toBase58(), { lamports: 1_000_000_000, owner: SYSTEM_PROGRAM_ID.toBase58(), executable: false, data: Buffer.alloc(0) });
    store.set(ata.toBase58(), {
      lamports: rentExempt(TOKEN_ACCOUNT_SIZE), owner: TOKEN_PROGRAM_ID.toBase58(), executable: false,
      data: encodeTokenAccount({ mint, owner, amount: 1_000_000_000_000n, ...(delegate ? { delegate, delegatedAmount: U64_MAX } : {}) }),
    });
    return ata;
  };

  /** One payer's create_user_payment + approve + create_payment_policy, run by the program. */
  const createByTransaction = (memo: string, amount: string): CreatedPolicy => {
    const owner = new PublicKey(randomBytes(32));
    const ata = fund(owner, null);
    const userPayment = pdas.userPayment(owner, mint);
    const policy = pdas.paymentPolicy(userPayment, 1);
    const ixs = [
      tributaryIx('create_user_payment', {
        owner, user_payment: userPayment, token_account: ata, token_mint: mint, config: pdas.config(), fee_payer: owner,
      }, {}, { eventCpi: true }),
      approveIx(ata.toBase58(), userPayment.toBase58(), owner.toBase58(), U64_MAX),
      tributaryIx('create_payment_policy', {
        user: owner, user_payment: userPayment, recipient, token_mint: mint, gateway, config: pdas.config(), payment_policy: policy, fee_payer: owner,
      }, {
        policy_type: { Subscription: { amount: bn(amount), auto_renew: true, max_renewals: null, payment_frequency: { Monthly: {} }, next_payment_due: bn(FAR), padding: zeros(97) } },
        memo: fixedText(memo, 64),
      }, { eventCpi: true }),
    ];
    const tx = new VersionedTransaction(compileV0(owner, ixs, ln.chain.latestBlockhash().blockhash));
    tx.signatures[0] = randomBytes(64);
    const r = submitTransaction(ln.chain, tx, { verifySignatures: false, commit: true });
    if (r.kind !== 'executed' || r.result.err !== null) throw new Error(`creating a bench policy failed: ${JSON.stringify(r.kind === 'executed' ? r.result.logs.slice(-3) : r.reason)}`);
    return { address: policy.toBase58(), userPayment: userPayment.toBase58(), owner: owner.toBase58(), recipient: recipient.toBase58(), memo };
  };

  /**
   * The first policy is made by the program; the others are its accounts cloned for a
   * new payer (user payment, policy and token account with the delegation written into
   * the store), at a fraction of a transaction's cost.
   */
  const create = (count: number, tag: string, amount: string): CreatedPolicy[] => {
    const first = createByTransaction(`${tag}-0`, amount);
    const up = readProgramAccount(store, new PublicKey(first.userPayment), 'UserPayment') as UserPayment;
    const pol = readProgramAccount(store, new PublicKey(first.address), 'PaymentPolicy') as PaymentPolicy;
    const out = [first];
    for (let i = 1; i < count; i += 1) {
      const owner = new PublicKey(randomBytes(32));
      const userPayment = pdas.userPayment(owner, mint);
      const policy = pdas.paymentPolicy(userPayment, 1);
      const ata = fund(owner, userPayment);
      const memo = `${tag}-${i}`;
      writeProgramAccount(store, userPayment, 'UserPayment', { ...up, owner, token_account: ata, rent_payer: owner, bump: bumpOf(userPayment) });
      writeProgramAccount(store, policy, 'PaymentPolicy', { ...pol, user_payment: userPayment, memo: fixedText(memo, 64), rent_payer: owner, bump: bumpOf(policy) });
      out.push({ address: policy.toBase58(), userPayment: userPayment.toBase58(), owner: owner.toBase58(), recipient: recipient.toBase58(), memo });
    }
    return out;
  };

  /** The first of the month: every policy's next_payment_due set to one instant. */
  const setDue = (policies: string[], dueAt: number): void => {
    for (const a of policies) {
      const key = new PublicKey(a);
      const p = readProgramAccount(store, key, 'PaymentPolicy') as PaymentPolicy;
      const t = p.policy_type as { Subscription: { next_payment_due: unknown } };
      t.Subscription.next_payment_due = bn(dueAt);
      writeProgramAccount(store, key, 'PaymentPolicy', p);
    }
  };

  parentPort!.on('message', (m: ChainCommand) => {
    try {
      if (m.kind === 'create') parentPort!.postMessage({ kind: 'created', policies: create(m.count, m.tag, m.amount) });
      else if (m.kind === 'due') { setDue(m.policies, m.dueAt); parentPort!.postMessage({ kind: 'done' }); }
      else void ln.close().then(() => parentPort!.postMessage({ kind: 'closed' }));
    } catch (err) {
      parentPort!.postMessage({ kind: 'error', message: (err as Error).message });
    }
  });
  parentPort!.postMessage({ kind: 'ready', rpcUrl: ln.rpcUrl, fixtures: ln.fixtures });
}

await main();
