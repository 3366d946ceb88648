/**
 * The wallet the page signs with: every Solana wallet in the browser that signs messages
 * and transactions (Wallet Standard). One connects on its own; several are listed to
 * choose from; none leaves a hint on how to get one.
 */
import type { Wallet } from '@wallet-standard/base';
import { byId, clear, el } from '../shared/dom.js';
import { connect, listWallets, onWalletsChanged, type Connected, type Need } from '../shared/wallet.js';
import { PageError } from './errors.js';
import { connectedWallet, status, useWallet } from './state.js';

const NEEDS: readonly Need[] = ['signMessage', 'signTransaction'];
const NONE = 'No Solana wallet found in this browser. Install a wallet that supports the Wallet Standard (Phantom, Solflare or Backpack, say), then reload this page.';

let choose: ((w: Wallet | undefined) => void) | undefined;

function render(): void {
  const list = byId('wallets');
  clear(list);
  for (const w of listWallets(NEEDS)) {
    const button = el('button', { type: 'button' }, [el('img', { src: w.icon, alt: '' }), w.name]);
    button.addEventListener('click', () => { list.hidden = true; const c = choose; choose = undefined; c?.(w); });
    list.appendChild(el('li', null, [button]));
  }
}

function pick(): Promise<Wallet | undefined> {
  const wallets = listWallets(NEEDS);
  if (wallets.length <= 1) return Promise.resolve(wallets[0]);
  const list = byId('wallets');
  list.hidden = false;
  list.querySelector('button')?.focus();
  status.say('Choose a wallet.');
  return new Promise((resolve) => { choose = resolve; });
}

export function wireWallets(): void {
  onWalletsChanged(() => { render(); byId('wallet-hint').textContent = listWallets(NEEDS).length ? '' : NONE; });
  render();
}

/**
 * The connected wallet, connecting first when needed; `expected` is the address the page
 * signed in as: another account is refused before anything is signed.
 */
export async function walletFor(expected?: string): Promise<Connected> {
  let wallet = connectedWallet();
  if (!wallet) {
    const chosen = await pick();
    if (!chosen) {
      byId('wallet-hint').textContent = NONE;
      throw new PageError('No Solana wallet found in this browser.');
    }
    status.say(`Connecting to ${chosen.name}…`);
    wallet = await connect(chosen);
    useWallet(wallet);
  }
  if (expected && wallet.address !== expected) {
    throw new PageError(`${wallet.name} is on account ${wallet.address}, but you signed in as ${expected}. Switch accounts in the wallet, or sign out and sign in again.`);
  }
  return wallet;
}
