/**
 * The localnet answering as Solana devnet, read and paid through @solana/kit's own RPC
 * client, as the x402 packages use it: devnet's genesis hash, devnet USDC and Token-2022
 * PYUSD as real mints (fetchMint, jsonParsed), version 0 transfers with Compute Budget and
 * Memo instructions landing with the fee a node charges, and simulations answering as a
 * node does (overdraft, bad signature, spent compute budget, a stale blockhash).
 */
import {
  address, appendTransactionMessageInstructions, createSolanaRpc, createTransactionMessage, getBase64EncodedWireTransaction,
  getSignatureFromTransaction, isSolanaError, pipe, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, type Address, type Instruction, type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getSetComputeUnitLimitInstruction, getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { fetchMint, findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  fetchMint as fetchMint2022, getCreateAssociatedTokenIdempotentInstructionAsync, TOKEN_2022_PROGRAM_ADDRESS,
} from '@solana-program/token-2022';
import { expect } from 'chai';
import { rentExempt } from '../../infra/localnet/program/encoding.js';
import { startLocalnetProcess } from '../support/localnet-process.js';
import {
  DEVNET_NETWORK, DEVNET_PYUSD, DEVNET_USDC, FUNDED_BASE_UNITS, startDevnetLocalnet, type DevnetLocalnet,
} from '../support/devnet.js';

const MEMO = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const MEMO_V1 = address('Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo');

interface TransferOptions {
  from: KeyPairSigner; to: string; feePayer: KeyPairSigner; mint?: string; program?: Address; amount: bigint; decimals?: number;
  limit?: number | null; price?: bigint; memo?: string; before?: Instruction[]; after?: Instruction[]; blockhash?: string;
}

describe('localnet answering as devnet (SOLANA_CLUSTER=devnet): @solana/kit reads and pays', function () {
  this.timeout(60_000);
  let net: DevnetLocalnet;
  let rpc: ReturnType<typeof createSolanaRpc>;
  let payer: KeyPairSigner;
  let receiver: KeyPairSigner;
  let feePayer: KeyPairSigner;

  before(async () => {
    net = await startDevnetLocalnet('devnet-kit');
    rpc = createSolanaRpc(net.rpcUrl);
    payer = await net.fund('payer').signer();
    receiver = await net.fund('receiver').signer();
    feePayer = await net.fund('fee-payer').signer();
  });
  after(async () => net.close());

  /** a v0 transfer as the exact scheme builds one: limit, price, TransferChecked, memo; fee payer and owner sign */
  async function transfer(o: TransferOptions): Promise<{ wire: string; signature: Signature }> {
    const program = o.program ?? TOKEN_PROGRAM_ADDRESS;
    const mint = address(o.mint ?? DEVNET_USDC);
    const [source] = await findAssociatedTokenPda({ mint, owner: o.from.address, tokenProgram: program });
    const [destination] = await findAssociatedTokenPda({ mint, owner: address(o.to), tokenProgram: program });
    const blockhash = o.blockhash ?? (await rpc.getLatestBlockhash().send()).value.blockhash;
    const ixs: Instruction[] = [
      ...(o.limit === null ? [] : [getSetComputeUnitLimitInstruction({ units: o.limit ?? 20_000 })]),
      getSetComputeUnitPriceInstruction({ microLamports: o.price ?? 5_000n }),
      ...(o.before ?? []),
      getTransferCheckedInstruction({ source, mint, destination, authority: o.from, amount: o.amount, decimals: o.decimals ?? 6 }, { programAddress: program }),
      { programAddress: MEMO, accounts: [], data: new TextEncoder().encode(o.memo ?? 'devnet localnet test') },
      ...(o.after ?? []),
    ];
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(o.feePayer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: blockhash as never, lastValidBlockHeight: 10_000_000n }, m),
      (m) => appendTransactionMessageInstructions(ixs, m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    return { wire: getBase64EncodedWireTransaction(signed), signature: getSignatureFromTransaction(signed) };
  }

  const simulate = async (wire: string, cfg: { sigVerify?: boolean; replaceRecentBlockhash?: boolean } = {}) =>
    (await rpc.simulateTransaction(wire as never, { encoding: 'base64', sigVerify: cfg.sigVerify ?? false, replaceRecentBlockhash: cfg.replaceRecentBlockhash ?? false } as never).send()).value;

  async function confirmed(signature: Signature): Promise<void> {
    for (let i = 0; i < 100; i += 1) {
      const [status] = (await rpc.getSignatureStatuses([signature]).send()).value;
      if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') {
        expect(status.err).to.equal(null);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${signature} never confirmed`);
  }

  /** kit reads every number as a bigint: the JSON a node sent */
  const plain = (v: unknown): string => JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? Number(x) : x));

  /** 5,000 lamports per signature and the priority fee, price x limit / 1e6 rounded up */
  const fee = (signatures: number, price: bigint, limit: number): number => 5_000 * signatures + Number((price * BigInt(limit) + 999_999n) / 1_000_000n);

  it('answers devnet\'s genesis hash, and its fixtures name devnet', async () => {
    expect(await rpc.getGenesisHash().send()).to.equal('EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG');
    expect(`solana:${(await rpc.getGenesisHash().send()).slice(0, 32)}`).to.equal(DEVNET_NETWORK);
    expect(net.ln.fixtures).to.deep.include({ cluster: 'devnet', network: DEVNET_NETWORK, genesisHash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG' });
    const spare = net.ln.fixtures.wallets.find((w) => w.role === 'spare')!;
    expect(spare.balances.map((b) => [b.symbol, b.amount, b.tokenProgram ?? 'spl-token'])).to.deep.include.members([
      ['USDC-dev', FUNDED_BASE_UNITS.toString(), 'spl-token'],
      ['PYUSD-dev', FUNDED_BASE_UNITS.toString(), TOKEN_2022_PROGRAM_ADDRESS],
    ]);
    expect(net.lamports(spare.publicKey)).to.be.greaterThan(1_000_000_000);
  });

  it('serves devnet USDC (SPL Token) and PYUSD (Token-2022) to fetchMint, in base64 and jsonParsed', async () => {
    const usdc = await fetchMint(rpc, address(DEVNET_USDC));
    expect(usdc.programAddress).to.equal(TOKEN_PROGRAM_ADDRESS);
    expect(usdc.data).to.deep.include({ decimals: 6, isInitialized: true });
    const pyusd = await fetchMint2022(rpc, address(DEVNET_PYUSD));
    expect(pyusd.programAddress).to.equal(TOKEN_2022_PROGRAM_ADDRESS);
    expect(pyusd.data).to.deep.include({ decimals: 6, isInitialized: true });
    for (const [mint, program] of [[DEVNET_USDC, 'spl-token'], [DEVNET_PYUSD, 'spl-token-2022']] as const) {
      const { value } = await rpc.getAccountInfo(address(mint), { encoding: 'jsonParsed' }).send();
      const data = value!.data as unknown as { program: string; parsed: { type: string; info: Record<string, unknown> } };
      expect(data.program).to.equal(program);
      expect(data.parsed.type).to.equal('mint');
      expect(data.parsed.info).to.have.all.keys('decimals', 'supply', 'mintAuthority', 'freezeAuthority', 'isInitialized');
      expect(data.parsed.info).to.deep.include({ decimals: 6, isInitialized: true, freezeAuthority: null });
      expect(data.parsed.info.supply).to.be.a('string');
    }
  });

  it('lands a v0 TransferChecked with compute budget and memo: the amount moves, the fee payer pays the fee', async () => {
    const amount = 1_234_567n;
    const price = 5_000n;
    const before = {
      payer: net.tokenBalance(payer.address, DEVNET_USDC), receiver: net.tokenBalance(receiver.address, DEVNET_USDC),
      feePayer: net.lamports(feePayer.address), payerSol: net.lamports(payer.address),
    };
    const { wire, signature } = await transfer({ from: payer, to: receiver.address, feePayer, amount, price });
    const sim = await simulate(wire, { sigVerify: true });
    expect(sim.err).to.equal(null);
    expect(Number(sim.unitsConsumed)).to.be.within(1, 20_000);
    expect(sim.logs).to.include('Program log: Instruction: TransferChecked');
    expect(sim.logs).to.include('Program log: Memo (len 20): "devnet localnet test"');

    expect(await rpc.sendTransaction(wire as never, { encoding: 'base64' }).send()).to.equal(signature);
    await confirmed(signature);
    expect(net.tokenBalance(payer.address, DEVNET_USDC)).to.equal(before.payer - amount);
    expect(net.tokenBalance(receiver.address, DEVNET_USDC)).to.equal(before.receiver + amount);
    expect(net.lamports(feePayer.address)).to.equal(before.feePayer - fee(2, price, 20_000));
    expect(net.lamports(payer.address)).to.equal(before.payerSol);
    const tx = await rpc.getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
    expect(plain(tx?.version)).to.equal('0');
    expect(Number(tx?.meta?.fee)).to.equal(fee(2, price, 20_000));
  });

  it('charges the default limit (200,000 per instruction) at the price when no SetComputeUnitLimit is given', async () => {
    const price = 1_000_000n;
    const start = net.lamports(feePayer.address);
    const { wire, signature } = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n, price, limit: null });
    await rpc.sendTransaction(wire as never, { encoding: 'base64' }).send();
    await confirmed(signature);
    // price, transfer and memo: two instructions outside the Compute Budget program
    expect(net.lamports(feePayer.address)).to.equal(start - fee(2, price, 400_000));
  });

  it('simulates an overdraft as the token program fails it, and refuses to send it', async () => {
    const { wire } = await transfer({ from: payer, to: receiver.address, feePayer, amount: FUNDED_BASE_UNITS * 2n });
    const sim = await simulate(wire);
    expect(plain(sim.err)).to.equal('{"InstructionError":[2,{"Custom":1}]}');
    expect(sim.logs).to.include('Program log: Error: insufficient funds');
    const err = await rpc.sendTransaction(wire as never, { encoding: 'base64' }).send().catch((e: unknown) => e);
    expect(isSolanaError(err, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).to.equal(true);
  });

  it('refuses a bad signature when signatures are verified (simulation and send), and simulates it when they are not', async () => {
    const { wire } = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n });
    const bytes = Buffer.from(wire, 'base64');
    bytes[1 + 64 + 10] = bytes[1 + 64 + 10]! ^ 0xff; // the second signature: the token owner's
    const bad = bytes.toString('base64');
    const refused = await simulate(bad, { sigVerify: true }).catch((e: unknown) => e);
    expect(isSolanaError(refused, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE)).to.equal(true);
    expect((await simulate(bad)).err).to.equal(null);
    const sent = await rpc.sendTransaction(bad as never, { encoding: 'base64', skipPreflight: true }).send().catch((e: unknown) => e);
    expect(isSolanaError(sent, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE)).to.equal(true);
  });

  it('fails an instruction past the compute unit limit, and a Compute Budget instruction given twice', async () => {
    const { wire } = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n, limit: 2_000 });
    const sim = await simulate(wire);
    expect(plain(sim.err)).to.equal('{"InstructionError":[2,"ComputationalBudgetExceeded"]}');
    expect(Number(sim.unitsConsumed)).to.equal(2_000);
    const twice = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n, after: [getSetComputeUnitPriceInstruction({ microLamports: 1n })] });
    expect(plain((await simulate(twice.wire)).err)).to.equal('{"DuplicateInstruction":4}');
  });

  it('replaces a stale blockhash when asked (replaceRecentBlockhash), and otherwise answers BlockhashNotFound', async () => {
    const { wire } = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n, blockhash: '11111111111111111111111111111111' });
    expect((await simulate(wire)).err).to.equal('BlockhashNotFound');
    const replaced = await simulate(wire, { replaceRecentBlockhash: true });
    expect(replaced.err).to.equal(null);
    expect(replaced.replacementBlockhash?.blockhash).to.be.a('string');
  });

  it('checks memos: v2 refuses an account that did not sign, v1 takes plain text, both refuse bytes that are not UTF-8', async () => {
    const unsigned = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n, after: [
      { programAddress: MEMO, accounts: [{ address: receiver.address, role: 0 }], data: new TextEncoder().encode('x') },
    ] });
    expect(plain((await simulate(unsigned.wire)).err)).to.equal('{"InstructionError":[4,"MissingRequiredSignature"]}');
    const v1 = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n, after: [{ programAddress: MEMO_V1, data: new TextEncoder().encode('v1') }] });
    expect((await simulate(v1.wire)).err).to.equal(null);
    const binary = await transfer({ from: payer, to: receiver.address, feePayer, amount: 1n, after: [{ programAddress: MEMO_V1, data: new Uint8Array([0xff, 0xfe]) }] });
    expect(plain((await simulate(binary.wire)).err)).to.equal('{"InstructionError":[4,"InvalidInstructionData"]}');
  });

  it('lands a Token-2022 TransferChecked to a wallet whose token account the transaction creates', async () => {
    const fresh = net.fund('unused').address; // funded only to exist; its PYUSD account is created below
    const newcomer = address((await import('@solana/web3.js')).Keypair.generate().publicKey.toBase58());
    const mint = address(DEVNET_PYUSD);
    const createAta = await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: feePayer, owner: newcomer, mint, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS });
    const amount = 777_000n;
    const start = { payer: net.tokenBalance(payer.address, DEVNET_PYUSD), feePayer: net.lamports(feePayer.address) };
    const { wire, signature } = await transfer({
      from: payer, to: newcomer, feePayer, amount, mint: DEVNET_PYUSD, program: TOKEN_2022_PROGRAM_ADDRESS, limit: 60_000, before: [createAta],
    });
    await rpc.sendTransaction(wire as never, { encoding: 'base64' }).send();
    await confirmed(signature);
    expect(net.tokenBalance(payer.address, DEVNET_PYUSD)).to.equal(start.payer - amount);
    expect(net.tokenBalance(newcomer, DEVNET_PYUSD)).to.equal(amount);
    expect(net.tokenBalance(fresh, DEVNET_PYUSD)).to.equal(FUNDED_BASE_UNITS);
    // the fee, and the rent of the new account (165 bytes and Token-2022's ImmutableOwner extension)
    expect(net.lamports(feePayer.address)).to.equal(start.feePayer - fee(2, 5_000n, 60_000) - rentExempt(170));
    const [ata] = await findAssociatedTokenPda({ mint, owner: newcomer, tokenProgram: TOKEN_2022_PROGRAM_ADDRESS });
    const { value } = await rpc.getAccountInfo(ata, { encoding: 'jsonParsed' }).send();
    expect((value!.data as unknown as { program: string }).program).to.equal('spl-token-2022');
    expect(value!.owner).to.equal(TOKEN_2022_PROGRAM_ADDRESS);
  });

  it('`tributary localnet` with SOLANA_CLUSTER=devnet and no SOLANA_RPC_URL answers as devnet, as `make start` runs it', async function () {
    this.timeout(180_000); // a process started as a user starts it
    const proc = await startLocalnetProcess({ seed: 'devnet-cli', rate: 0, maxEvents: 0, env: { SOLANA_CLUSTER: 'devnet' } });
    try {
      const cli = createSolanaRpc(proc.rpcUrl);
      expect(await cli.getGenesisHash().send()).to.equal('EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG');
      expect((await fetchMint(cli, address(DEVNET_USDC))).data.decimals).to.equal(6);
      expect((await fetchMint2022(cli, address(DEVNET_PYUSD))).programAddress).to.equal(TOKEN_2022_PROGRAM_ADDRESS);
    } finally {
      await proc.stop();
    }
  });
});
