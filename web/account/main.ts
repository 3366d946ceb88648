/**
 * The payer's account page, /account: sign in with a Wallet Standard wallet, see every
 * subscription the wallet pays for, and pause, resume or cancel it, or revoke a token
 * account's delegation; each change is a transaction the wallet signs, done once the
 * chain confirms it.
 */
import '../shared/style.css';
import './style.css';
import { byId } from '../shared/dom.js';
import { messageOf } from '../shared/http.js';
import { clearAccount, load } from './account.js';
import { wirePayments } from './payments.js';
import { showSignedIn, signIn, signOut as forget } from './signin.js';
import { restoreSession, status, whenUnauthorized, type Session } from './state.js';
import { wireWallets } from './wallets.js';

function signOut(): void {
  forget();
  clearAccount();
}

function expired(): void {
  signOut();
  status.say('Your sign-in has expired. Sign in with your wallet again.', 'error');
}

async function enter(session: Session, restored: boolean): Promise<void> {
  showSignedIn(session, expired);
  status.say(restored ? 'Loading your subscriptions…' : 'Signed in. Loading your subscriptions…');
  if (await load()) {
    status.say(restored ? 'Your subscriptions.' : 'Signed in.', 'ok');
    document.body.setAttribute('data-state', 'signed-in');
    byId('subs-title').focus();
  }
}

wireWallets();
wirePayments((err) => status.say(`Your payments could not be read: ${messageOf(err)}`, 'error'));
whenUnauthorized(() => {
  signOut();
  document.body.setAttribute('data-state', 'signed-out');
});

const signInButton = byId('wallet-sign-in', HTMLButtonElement);
signInButton.addEventListener('click', () => {
  signInButton.disabled = true;
  void signIn().then(async (session) => {
    signInButton.disabled = false;
    if (session) await enter(session, false);
  });
});
byId('sign-out').addEventListener('click', () => {
  signOut();
  document.body.setAttribute('data-state', 'signed-out');
  status.say('Signed out. This tab no longer holds your sign-in.');
  signInButton.focus();
});
byId('refresh').addEventListener('click', () => {
  status.say('Refreshing…');
  void load().then((ok) => { if (ok) status.say('Up to date.', 'ok'); });
});

const saved = restoreSession();
if (saved) void enter(saved, true);
else {
  showSignedIn(null, expired);
  document.body.setAttribute('data-state', 'signed-out');
}
