/**
 * Signing in: a pasted gateway JWT, or a wallet (found through the Wallet Standard, or an
 * injected `window.solana`) signing the gateway's challenge.
 */
import { byId } from '../shared/dom.js';
import { messageOf, postJson } from '../shared/http.js';
import { connect, listWallets } from '../shared/wallet.js';
import { closeLive, connectLive } from './live.js';
import { renderOverview } from './overview.js';
import { loadRevenue } from './revenue.js';
import { api, S, status, STORAGE_KEY, whenUnauthorized } from './state.js';
import { loadSubscribers } from './subscribers.js';
import type { Overview } from './types.js';

interface InjectedProvider {
  connect(): Promise<unknown>;
  signMessage(message: Uint8Array, display: 'utf8'): Promise<{ signature: Uint8Array }>;
  publicKey: { toString(): string };
}

declare global {
  interface Window { solana?: InjectedProvider; phantom?: { solana?: InjectedProvider } }
}

export async function signedIn(gateway: string, token: string): Promise<void> {
  S.gateway = gateway;
  S.token = token;
  const ov = await api<Overview>('overview');
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ gateway, token }));
  byId('sign-in').hidden = true;
  byId('dashboard').hidden = false;
  byId('who').hidden = false;
  byId('who-gateway').textContent = gateway;
  status.say('Signed in.');
  renderOverview(ov);
  connectLive();
  await Promise.all([loadRevenue(), loadSubscribers()]);
}

export function signOut(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  closeLive();
  S.token = null;
  byId('dashboard').hidden = true;
  byId('who').hidden = true;
  byId('sign-in').hidden = false;
}

async function walletSign(message: Uint8Array): Promise<{ signer: string; signature: Uint8Array }> {
  const wallet = listWallets(['signMessage'])[0];
  if (wallet) {
    const connected = await connect(wallet);
    return { signer: connected.address, signature: await connected.signMessage(message) };
  }
  const p = window.phantom?.solana ?? window.solana;
  if (!p?.signMessage) throw new Error('no Solana wallet found in this browser');
  await p.connect();
  const out = await p.signMessage(message, 'utf8');
  return { signer: p.publicKey.toString(), signature: out.signature };
}

async function walletSignIn(gateway: string): Promise<void> {
  const auth = `/v1/gateway/${encodeURIComponent(gateway)}/auth/`;
  const ch = await postJson<{ nonce: string }>(`${auth}challenge`, {});
  // sign only a gateway sign-in challenge for this gateway (purpose|service|gateway|random)
  const f = String(ch.nonce).split('|');
  if (f.length !== 4 || f[0] !== 'tributary-gateway-sign-in' || f[2] !== gateway) {
    throw new Error('the server sent a challenge that is not a sign-in for this gateway; not signing it');
  }
  const signed = await walletSign(new TextEncoder().encode(ch.nonce));
  // the nonce named: another tab's newer challenge does not get in the way
  const v = await postJson<{ token: string }>(`${auth}verify`, { signer: signed.signer, signature: Array.from(signed.signature), nonce: ch.nonce });
  await signedIn(gateway, v.token);
}

export function wireSignIn(): void {
  whenUnauthorized(signOut);
  const gatewayInput = byId('gateway', HTMLInputElement);
  const tokenInput = byId('token', HTMLTextAreaElement);
  byId('token-form', HTMLFormElement).addEventListener('submit', (e) => {
    e.preventDefault();
    const gateway = gatewayInput.value.trim();
    const token = tokenInput.value.trim();
    if (!token) { status.say('Paste a gateway JWT, or sign in with a wallet.', 'error'); tokenInput.focus(); return; }
    status.say('Signing in…');
    signedIn(gateway, token).catch((err: unknown) => status.say(`Sign-in failed: ${messageOf(err)}`, 'error'));
  });
  byId('sign-out').addEventListener('click', () => { signOut(); status.say('Signed out.'); });
  byId('wallet-sign-in').addEventListener('click', () => {
    const gateway = gatewayInput.value.trim();
    if (!gateway) { status.say('Enter the gateway account address first.', 'error'); gatewayInput.focus(); return; }
    status.say('Asking the wallet to sign the challenge…');
    walletSignIn(gateway).catch((err: unknown) => status.say(`Wallet sign-in failed: ${messageOf(err)}`, 'error'));
  });
}
