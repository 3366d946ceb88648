/**
 * The localnet answers token reads as a Solana node does, through web3.js's own calls:
 * balances, token accounts by owner and by delegate, jsonParsed accounts and mints; and
 * an SPL approve sent over sendTransaction shows up as the delegate.
 */
import { expect } from 'chai';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { startLocalnet, type Localnet } from '../../infra/localnet/index.js';
import { approveIx, associatedTokenAddress, createAtaIdempotentIx, TOKEN_PROGRAM } from '../../src/kernel/domain/spl-token.js';
import { deriveActors } from '../../infra/localnet/genesis.js';
import { tributaryIx } from '../../infra/localnet/instructions.js';
import { pdas } from '../../infra/localnet/keys.js';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

describe('localnet token RPC', function () {
  this.timeout(30_000);
  let ln: Localnet;
  let conn: Connection;

  before(async () => {
    ln = await startLocalnet({ port: 0, seed: 'tokens-rpc', rate: 0 });
    conn = new Connection(ln.rpcUrl, { commitment: 'confirmed' });
  });
  // web3.js closes its idle websocket 500 ms after the last confirmation; closing the
  // localnet first leaves it reconnecting (and logging) for the rest of the run
  after(async () => { await new Promise((res) => setTimeout(res, 1000)); await ln.close(); });

  it('publishes balances, gateway signers and an unfunded wallet in the fixtures', () => {
    const spare = ln.fixtures.wallets.filter((w) => w.role === 'spare');
    expect(spare.length).to.be.greaterThan(0);
    const usdc = spare[0]!.balances.find((b) => b.symbol === 'USDC');
    expect(usdc).to.deep.equal({ mint: USDC, symbol: 'USDC', tokenAccount: associatedTokenAddress(spare[0]!.publicKey, USDC), amount: '1000000000000' });
    const unfunded = ln.fixtures.wallets.filter((w) => w.role === 'unfunded');
    expect(unfunded).to.have.length(1);
    expect(unfunded[0]!.balances).to.deep.equal([]);
    for (const g of ln.fixtures.gateways) {
      expect(g.signer).to.not.equal(g.authority);
      expect(Keypair.fromSecretKey(bs58.decode(g.signerSecretKey)).publicKey.toBase58()).to.equal(g.signer);
    }
  });

  it('answers getTokenAccountBalance, getTokenAccountsByOwner and jsonParsed reads', async () => {
    const owner = new PublicKey(ln.fixtures.wallets.find((w) => w.role === 'spare')!.publicKey);
    const ata = new PublicKey(associatedTokenAddress(owner.toBase58(), USDC));
    const balance = await conn.getTokenAccountBalance(ata);
    expect(balance.value).to.deep.equal({ amount: '1000000000000', decimals: 6, uiAmount: 1_000_000, uiAmountString: '1000000' });
    const byMint = await conn.getTokenAccountsByOwner(owner, { mint: new PublicKey(USDC) });
    expect(byMint.value.map((a) => a.pubkey.toBase58())).to.deep.equal([ata.toBase58()]);
    expect(byMint.value[0]!.account.data).to.have.length(165);
    const all = await conn.getParsedTokenAccountsByOwner(owner, { programId: new PublicKey(TOKEN_PROGRAM) });
    expect(all.value.length).to.equal(ln.fixtures.mints.length);
    const parsed = await conn.getParsedAccountInfo(ata);
    expect(parsed.value?.data).to.deep.equal({
      program: 'spl-token', space: 165,
      parsed: { type: 'account', info: { isNative: false, mint: USDC, owner: owner.toBase58(), state: 'initialized', tokenAmount: balance.value } },
    });
    const mint = await conn.getParsedAccountInfo(new PublicKey(USDC));
    expect((mint.value?.data as { parsed: { type: string; info: { decimals: number } } }).parsed).to.deep.include({ type: 'mint' });
    const raw = await conn.getAccountInfo(ata);
    expect(raw?.owner.toBase58()).to.equal(TOKEN_PROGRAM);
    const notToken = await conn.getTokenAccountBalance(owner).then(() => 'answered', (e: Error) => e.message);
    expect(notToken).to.match(/Invalid param: not a Token account/);
  });

  it('names the program error in a failed preflight, and creates token accounts idempotently', async () => {
    const unfunded = Keypair.fromSecretKey(bs58.decode(ln.fixtures.wallets.find((w) => w.role === 'unfunded')!.secretKey));
    const create = new Transaction().add(createAtaIdempotentIx(unfunded.publicKey.toBase58(), unfunded.publicKey.toBase58(), USDC));
    for (let i = 0; i < 2; i += 1) {
      create.recentBlockhash = (await conn.getLatestBlockhash()).blockhash;
      create.feePayer = unfunded.publicKey;
      create.signatures = [];
      create.sign(unfunded);
      await conn.confirmTransaction(await conn.sendRawTransaction(create.serialize()), 'confirmed');
      await new Promise((r) => setTimeout(r, 450));
    }
    const balance = await conn.getTokenAccountBalance(new PublicKey(associatedTokenAddress(unfunded.publicKey.toBase58(), USDC)));
    expect(balance.value.amount).to.equal('0');

    const admin = deriveActors('tokens-rpc').admin;
    const pause = new Transaction().add(tributaryIx('set_emergency_pause', { admin: admin.publicKey, config: pdas.config() }, { paused: true }));
    pause.recentBlockhash = (await conn.getLatestBlockhash()).blockhash;
    pause.feePayer = admin.publicKey;
    pause.sign(admin);
    await conn.confirmTransaction(await conn.sendRawTransaction(pause.serialize()), 'confirmed');
    const owner = unfunded.publicKey;
    const mint = new PublicKey(USDC);
    const up = pdas.userPayment(owner, mint);
    const refused = new Transaction().add(tributaryIx('create_user_payment', {
      owner, user_payment: up, token_account: new PublicKey(associatedTokenAddress(owner.toBase58(), USDC)), token_mint: mint, config: pdas.config(), fee_payer: owner,
    }));
    refused.recentBlockhash = (await conn.getLatestBlockhash()).blockhash;
    refused.feePayer = owner;
    refused.sign(unfunded);
    const message = await conn.sendRawTransaction(refused.serialize()).then(() => 'landed', (e: Error) => e.message);
    expect(message).to.contain('Error processing Instruction 0: ProgramPaused (6000): Program is paused (custom program error: 0x1770)');
  });

  it('lands an approve sent over RPC and shows the delegate', async () => {
    const spare = ln.fixtures.wallets.find((w) => w.role === 'spare')!;
    const owner = Keypair.fromSecretKey(bs58.decode(spare.secretKey));
    const ata = associatedTokenAddress(owner.publicKey.toBase58(), USDC);
    const delegate = Keypair.generate().publicKey;
    const tx = new Transaction().add(approveIx(ata, delegate.toBase58(), owner.publicKey.toBase58(), 12_345n));
    tx.recentBlockhash = (await conn.getLatestBlockhash()).blockhash;
    tx.feePayer = owner.publicKey;
    tx.sign(owner);
    const sig = await conn.sendRawTransaction(tx.serialize());
    await conn.confirmTransaction(sig, 'confirmed');
    const landed = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const post = landed?.meta?.postTokenBalances ?? [];
    expect(post).to.have.length(1);
    expect(post[0]).to.deep.include({ mint: USDC, owner: owner.publicKey.toBase58(), programId: TOKEN_PROGRAM });
    expect(post[0]!.uiTokenAmount.amount).to.equal(landed?.meta?.preTokenBalances?.[0]?.uiTokenAmount.amount);
    const parsed = await conn.getParsedAccountInfo(new PublicKey(ata));
    const info = (parsed.value?.data as { parsed: { info: Record<string, unknown> } }).parsed.info;
    expect(info['delegate']).to.equal(delegate.toBase58());
    expect(info['delegatedAmount']).to.deep.equal({ amount: '12345', decimals: 6, uiAmount: 0.012345, uiAmountString: '0.012345' });
    const byDelegate = await conn.getTokenAccountsByOwner(owner.publicKey, { mint: new PublicKey(USDC) });
    expect(byDelegate.value).to.have.length(1);
  });
});
