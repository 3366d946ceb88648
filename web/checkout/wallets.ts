/**
 * Choosing a wallet: every Solana wallet in the browser that can sign transactions and
 * messages (Wallet Standard). One wallet connects on its own; several are listed to pick
 * from; none leaves a hint on how to get one.
 */
import type { Wallet } from '@wallet-standard/base';
import { byId, clear, el } from '../shared/dom.js';
import type { StatusLine } from '../shared/status.js';
import { connect, listWallets, onWalletsChanged, walletMessage, type Connected, type Need } from '../shared/wallet.js';

const NEEDS: readonly Need[] = ['signTransaction', 'signMessage'];

export interface WalletPicker {
  /** the connected wallet, connecting (or asking which) first when needed; undefined when none is connected */
  connected(): Promise<Connected | undefined>;
}

export function createWalletPicker(status: StatusLine, availability: (available: boolean) => void): WalletPicker {
  const list = byId('wallets');
  const hint = byId('wallet-hint');
  const account = byId('account');
  const connectButton = byId('connect', HTMLButtonElement);
  let current: Connected | undefined;
  let choose: ((w: Wallet | undefined) => void) | undefined;

  const render = () => {
    const wallets = listWallets(NEEDS);
    availability(wallets.length > 0 || current !== undefined);
    connectButton.hidden = current !== undefined || wallets.length === 0;
    hint.textContent = current ? '' : wallets.length === 0
      ? 'No Solana wallet found in this browser. Install a wallet that supports the Wallet Standard (Phantom, Solflare or Backpack, say), then reload this page.'
      : '';
    clear(list);
    for (const w of wallets) {
      const button = el('button', { type: 'button' }, [el('img', { src: w.icon, alt: '' }), w.name]);
      button.addEventListener('click', () => { list.hidden = true; choose?.(w); });
      list.appendChild(el('li', null, [button]));
    }
  };

  const pick = (): Promise<Wallet | undefined> => {
    const wallets = listWallets(NEEDS);
    if (wallets.length <= 1) return Promise.resolve(wallets[0]);
    list.hidden = false;
    list.querySelector('button')?.focus();
    status.say('Choose a wallet.');
    return new Promise((resolve) => { choose = resolve; });
  };

  const connected = async (): Promise<Connected | undefined> => {
    if (current) return current;
    const wallet = await pick();
    if (!wallet) { render(); status.say('No Solana wallet found in this browser.', 'error'); return undefined; }
    try {
      status.say(`Connecting to ${wallet.name}…`);
      current = await connect(wallet);
    } catch (err) {
      status.say(walletMessage(err), 'error');
      return undefined;
    }
    account.textContent = `Paying from ${current.address} (${current.name})`;
    account.hidden = false;
    status.say(`Connected to ${current.name}.`);
    render();
    return current;
  };

  connectButton.addEventListener('click', () => { void connected(); });
  onWalletsChanged(render);
  render();
  return { connected };
}
