/**
 * The hosted checkout page, /checkout/<session id>: the session's terms, a Wallet Standard
 * wallet to pay with, and the payment (pay.ts); an expired or paid session says so and
 * offers the way back to the merchant.
 */
import '../shared/style.css';
import './style.css';
import { byId } from '../shared/dom.js';
import { messageOf } from '../shared/http.js';
import { statusLine } from '../shared/status.js';
import { pay } from './pay.js';
import { readSession, sessionIdFromPath, type PublicSession } from './session.js';
import { renderTerms } from './terms.js';
import { createWalletPicker } from './wallets.js';

const status = statusLine();
const card = byId('checkout');
const payButton = byId('pay', HTMLButtonElement);

function offerCancel(url: string | undefined, words: string): void {
  const link = byId('cancel', HTMLAnchorElement);
  if (!url || !/^https?:\/\//i.test(url)) return;
  link.href = url;
  link.textContent = words;
  link.hidden = false;
}

function close(kind: 'complete' | 'expired', s: PublicSession | undefined): void {
  byId('pay-area').hidden = true;
  if (kind === 'expired') status.say('This checkout has expired: nothing was charged. Ask the merchant for a new link.', 'error');
  else status.say('This checkout is already paid.', 'ok');
  offerCancel(s?.cancelUrl, 'Back to the merchant');
  document.body.setAttribute('data-state', kind);
}

async function start(): Promise<void> {
  const id = sessionIdFromPath(location.pathname);
  if (!id) {
    byId('title').textContent = 'No checkout here';
    status.say('This address names no checkout session.', 'error');
    return;
  }
  let session: PublicSession;
  try {
    session = await readSession(id);
  } catch (err) {
    byId('title').textContent = 'Checkout unavailable';
    status.say(`This checkout cannot be shown: ${messageOf(err)}`, 'error');
    return;
  } finally {
    card.setAttribute('aria-busy', 'false');
  }
  renderTerms(session);
  if (session.status !== 'open') { close(session.status, session); return; }
  offerCancel(session.cancelUrl, 'Cancel and go back');
  byId('pay-area').hidden = false;
  payButton.textContent = session.schedule.kind === 'subscription' ? 'Subscribe' : 'Pay';
  const paused = session.programPaused;
  if (paused) status.say('Payments are paused by the program right now: nothing can be paid until they resume. Try again later.', 'error');
  const picker = createWalletPicker(status, (available) => { payButton.disabled = paused || !available; });
  payButton.addEventListener('click', () => {
    payButton.disabled = true;
    void (async () => {
      const wallet = await picker.connected();
      if (!wallet) { payButton.disabled = false; return; }
      const outcome = await pay(id, wallet, status);
      if (outcome.done) { location.assign(outcome.redirectUrl); return; }
      if (outcome.closed) close(outcome.closed, session);
      else payButton.disabled = false;
    })();
  });
  document.body.setAttribute('data-state', 'ready');
}

void start();
