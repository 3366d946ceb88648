/**
 * Solana wallets through the Wallet Standard: every wallet that registers in the page
 * (extensions, and the tests' wallet) is listed by getWallets(); the page uses
 * `standard:connect`, `solana:signTransaction` and `solana:signMessage`.
 */
import { getWallets } from '@wallet-standard/app';
import type { Wallet, WalletAccount } from '@wallet-standard/base';
import {
  SolanaSignMessage, SolanaSignTransaction,
  type SolanaSignMessageFeature, type SolanaSignTransactionFeature,
} from '@solana/wallet-standard-features';

const CONNECT = 'standard:connect';

interface ConnectFeature {
  readonly [CONNECT]: { readonly connect: (input?: { silent?: boolean }) => Promise<{ readonly accounts: readonly WalletAccount[] }> };
}

export type Need = 'signMessage' | 'signTransaction';

const FEATURE_OF: Record<Need, string> = { signMessage: SolanaSignMessage, signTransaction: SolanaSignTransaction };

/** A wallet the page can use, connected to one account. */
export interface Connected {
  readonly name: string;
  readonly icon: string;
  readonly address: string;
  signMessage(message: Uint8Array): Promise<Uint8Array>;
  signTransaction(transaction: Uint8Array): Promise<Uint8Array>;
}

function usable(wallet: Wallet, needs: readonly Need[]): boolean {
  const features = wallet.features;
  return CONNECT in features && needs.every((n) => FEATURE_OF[n] in features) && wallet.chains.some((c) => c.startsWith('solana:'));
}

/** The Solana wallets registered so far that offer every feature in `needs`. */
export function listWallets(needs: readonly Need[]): Wallet[] {
  return getWallets().get().filter((w) => usable(w, needs));
}

/** Calls `changed` whenever a wallet registers or goes; returns the unsubscribe. */
export function onWalletsChanged(changed: () => void): () => void {
  const wallets = getWallets();
  const offRegister = wallets.on('register', changed);
  const offUnregister = wallets.on('unregister', changed);
  return () => { offRegister(); offUnregister(); };
}

function solanaChain(account: WalletAccount): `${string}:${string}` | undefined {
  return account.chains.find((c) => c.startsWith('solana:'));
}

export async function connect(wallet: Wallet): Promise<Connected> {
  const { accounts } = await (wallet.features as unknown as ConnectFeature)[CONNECT].connect();
  const account = accounts[0];
  if (!account) throw new Error(`${wallet.name} shared no account`);
  const chain = solanaChain(account);
  return {
    name: wallet.name, icon: wallet.icon, address: account.address,
    async signMessage(message) {
      const feature = (wallet.features as Partial<SolanaSignMessageFeature>)[SolanaSignMessage];
      if (!feature) throw new Error(`${wallet.name} cannot sign messages`);
      const [out] = await feature.signMessage({ account, message });
      if (!out) throw new Error(`${wallet.name} returned no signature`);
      return out.signature;
    },
    async signTransaction(transaction) {
      const feature = (wallet.features as Partial<SolanaSignTransactionFeature>)[SolanaSignTransaction];
      if (!feature) throw new Error(`${wallet.name} cannot sign transactions`);
      const [out] = await feature.signTransaction({ account, transaction, ...(chain ? { chain } : {}) });
      if (!out) throw new Error(`${wallet.name} returned no transaction`);
      return out.signedTransaction;
    },
  };
}

/** A wallet's refusal as words: a closed prompt is not an error people need explained at length. */
export function walletMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  if (/reject|denied|declined|cancel/i.test(text)) return 'The wallet request was declined. Nothing was signed.';
  return text ? `The wallet said: ${text}` : 'The wallet did not answer.';
}
