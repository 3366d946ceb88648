/**
 * A Wallet Standard wallet for Chromium tests whose key stays in this process: the page
 * half (page/wallet.ts, bundled here with esbuild) registers in the page before its own
 * script runs, and every connect and signature comes back here through exposed functions.
 * It signs messages (ed25519) and transactions (legacy or v0, in the key's signer slot),
 * records what it signed, and can be told to refuse, as a person closing the prompt.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ed from '@noble/ed25519';
import { VersionedTransaction, type Keypair } from '@solana/web3.js';
import { build } from 'esbuild';
import type { BrowserContext, Page } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface Signed { kind: 'message' | 'transaction'; bytes: Uint8Array }

export interface TestWallet {
  readonly address: string;
  /** what the wallet signed, in order */
  readonly signed: Signed[];
  /** from now on, refuse (or stop refusing) every connect and signature as a person would */
  reject(on: boolean): void;
}

export interface TestWalletOptions { chain?: string; name?: string }

let bundle: Promise<string> | undefined;

/** The page half as one script (esbuild, once per process). */
export function pageScript(): Promise<string> {
  bundle ??= build({
    entryPoints: [path.join(HERE, 'page', 'wallet.ts')], bundle: true, write: false, format: 'iife', target: 'es2020',
    tsconfig: path.join(HERE, 'page', 'tsconfig.json'), logLevel: 'silent',
  }).then((r) => r.outputFiles[0]!.text);
  return bundle;
}

export const REJECTED = 'User rejected the request.';

/** Installs the wallet in every page of `target` (a context, or one page before it navigates). */
export async function installTestWallet(target: BrowserContext | Page, keypair: Keypair, options: TestWalletOptions = {}): Promise<TestWallet> {
  let rejecting = false;
  const signed: Signed[] = [];
  const address = keypair.publicKey.toBase58();
  const refuse = () => {
    if (rejecting) throw new Error(REJECTED);
  };
  await target.exposeFunction('testWalletConnect', () => { refuse(); return true; });
  await target.exposeFunction('testWalletSignMessage', async (bytes: number[]) => {
    refuse();
    const message = Uint8Array.from(bytes);
    signed.push({ kind: 'message', bytes: message });
    return Array.from(await ed.signAsync(message, keypair.secretKey.slice(0, 32)));
  });
  await target.exposeFunction('testWalletSignTransaction', (bytes: number[]) => {
    refuse();
    const tx = VersionedTransaction.deserialize(Uint8Array.from(bytes));
    tx.sign([keypair]);
    const out = tx.serialize();
    signed.push({ kind: 'transaction', bytes: out });
    return Array.from(out);
  });
  const cfg = { address, publicKey: Array.from(keypair.publicKey.toBytes()), chain: options.chain ?? 'solana:localnet', name: options.name ?? 'Tributary Test Wallet' };
  await target.addInitScript({ content: `window.__testWallet = ${JSON.stringify(cfg)};\n${await pageScript()}` });
  return { address, signed, reject: (on) => { rejecting = on; } };
}
