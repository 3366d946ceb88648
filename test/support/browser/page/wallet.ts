/**
 * The test wallet's page half, bundled by ../test-wallet.ts and run before the page's own
 * script: a Wallet Standard wallet (as browser extensions register: it answers
 * `wallet-standard:app-ready` and announces itself with `wallet-standard:register-wallet`)
 * whose key is not here. Every signature is asked of the test's Node process through the
 * functions it exposed, as an extension asks its own UI.
 */
import type { IdentifierString, Wallet, WalletAccount } from '@wallet-standard/base';
import type { SolanaSignMessageInput, SolanaSignTransactionInput } from '@solana/wallet-standard-features';

interface Config { address: string; publicKey: number[]; chain: IdentifierString; name: string }

declare global {
  interface Window {
    __testWallet?: Config;
    testWalletSignMessage?: (bytes: number[]) => Promise<number[]>;
    testWalletSignTransaction?: (bytes: number[]) => Promise<number[]>;
    testWalletConnect?: () => Promise<boolean>;
  }
}

function exposed<T>(f: T | undefined, name: string): T {
  if (!f) throw new Error(`the test did not expose ${name}`);
  return f;
}

function makeWallet(cfg: Config): Wallet {
  const account: WalletAccount = {
    address: cfg.address, publicKey: Uint8Array.from(cfg.publicKey), chains: [cfg.chain],
    features: ['solana:signMessage', 'solana:signTransaction'],
  };
  const mine = (a: WalletAccount) => {
    if (a.address !== cfg.address) throw new Error('unknown account');
  };
  let accounts: readonly WalletAccount[] = [];
  const features = {
    'standard:connect': {
      version: '1.0.0',
      connect: async () => {
        await exposed(window.testWalletConnect, 'testWalletConnect')();
        accounts = [account];
        return { accounts };
      },
    },
    'standard:events': { version: '1.0.0', on: () => () => undefined },
    'solana:signMessage': {
      version: '1.0.0',
      signMessage: (...inputs: SolanaSignMessageInput[]) => Promise.all(inputs.map(async (i) => {
        mine(i.account);
        const sig = await exposed(window.testWalletSignMessage, 'testWalletSignMessage')(Array.from(i.message));
        return { signedMessage: i.message, signature: Uint8Array.from(sig) };
      })),
    },
    'solana:signTransaction': {
      version: '1.0.0', supportedTransactionVersions: ['legacy', 0],
      signTransaction: (...inputs: SolanaSignTransactionInput[]) => Promise.all(inputs.map(async (i) => {
        mine(i.account);
        const signed = await exposed(window.testWalletSignTransaction, 'testWalletSignTransaction')(Array.from(i.transaction));
        return { signedTransaction: Uint8Array.from(signed) };
      })),
    },
  };
  return {
    version: '1.0.0', name: cfg.name, icon: `data:image/svg+xml;base64,${btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="11" fill="#0a58ca"/></svg>')}`, chains: [cfg.chain],
    features, get accounts() { return accounts; },
  };
}

const cfg = window.__testWallet;
if (cfg) {
  const wallet = makeWallet(cfg);
  const register = (api: { register(w: Wallet): unknown }) => { api.register(wallet); };
  window.addEventListener('wallet-standard:app-ready', (e) => register((e as CustomEvent<{ register(w: Wallet): unknown }>).detail));
  window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: register }));
}
