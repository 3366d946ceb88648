/**
 * The signed-in page: the wallet's subscriptions and delegations, read from /v1/me, and
 * the actions on them. An action is done when the chain has confirmed it: then the list is
 * read again until it shows the change, and the page says so.
 */
import { byId, clear, el } from '../shared/dom.js';
import { short } from '../shared/format.js';
import { messageOf } from '../shared/http.js';
import { delegationRow, delegationsOf, type Delegation } from './delegations.js';
import { loadPayments, resetPayments } from './payments.js';
import { perform, type Change } from './perform.js';
import { currentSession, meGet, status } from './state.js';
import { nameOf, subscriptionCard } from './subscriptions.js';
import type { Payment, PayerList, PolicyAction, Subscription } from './types.js';

let subs: Subscription[] = [];
let payments: Payment[] = [];
let busy = false;
const revoked = new Set<string>();

async function read(): Promise<void> {
  const [s, p] = await Promise.all([
    meGet<PayerList<Subscription>>('subscriptions'),
    meGet<PayerList<Payment>>('payments?limit=200'),
  ]);
  subs = s.data;
  payments = p.data;
}

function setBusy(on: boolean): void {
  busy = on;
  byId('account').setAttribute('aria-busy', String(on));
  for (const b of byId('account').querySelectorAll<HTMLButtonElement>('button[data-action], button[data-confirm], #refresh')) b.disabled = on;
}

function render(): void {
  const list = byId('subs');
  clear(list);
  for (const s of subs) list.appendChild(subscriptionCard(s, (sub, action, button) => void onPolicyAction(sub, action, button)));
  byId('subs-empty').hidden = subs.length > 0;
  const rows = byId('delegations');
  clear(rows);
  const delegations = delegationsOf(subs, payments);
  for (const d of delegations) rows.appendChild(delegationRow(d, revoked.has(d.mint), (x, button) => void onRevoke(x, button)));
  byId('delegations-empty').hidden = delegations.length > 0;
}

/** Forgets what the last wallet's lists showed (on sign-out). */
export function clearAccount(): void {
  subs = [];
  payments = [];
  revoked.clear();
  clear(byId('subs'));
  clear(byId('delegations'));
  resetPayments();
}

/** Reads and shows the lists; false (said in the status line) when they could not be read. */
export async function load(): Promise<boolean> {
  try {
    await Promise.all([read(), loadPayments()]);
  } catch (err) {
    status.say(`Your subscriptions could not be read: ${messageOf(err)}`, 'error');
    return false;
  }
  render();
  return true;
}

/** Reads the list again until it shows what the chain now says (the read model follows the chain within seconds). */
async function reloadUntil(shows: (list: readonly Subscription[]) => boolean, timeoutMs = 20_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await read();
      if (shows(subs)) { render(); return true; }
    } catch {
      // a failed read is tried again until the time is up
    }
    if (Date.now() > until) { render(); return false; }
    await new Promise((r) => setTimeout(r, 600));
  }
}

/** Asks under the buttons; resolves true on "yes". The safe answer has the focus. */
function confirmInline(group: HTMLElement, question: string, yes: string): Promise<boolean> {
  const kept = [...group.children] as HTMLElement[];
  for (const k of kept) k.hidden = true;
  return new Promise((resolve) => {
    const yesButton = el('button', { type: 'button', className: 'danger', text: yes, 'data-confirm': 'yes' });
    const noButton = el('button', { type: 'button', className: 'secondary', text: 'Keep it', 'data-confirm': 'no' });
    const box = el('div', { className: 'confirm', role: 'alertdialog', 'aria-label': question }, [el('p', { text: question }), yesButton, noButton]);
    const done = (answer: boolean) => { box.remove(); for (const k of kept) k.hidden = false; resolve(answer); };
    yesButton.addEventListener('click', () => done(true));
    noButton.addEventListener('click', () => done(false));
    box.addEventListener('keydown', (e) => { if (e.key === 'Escape') done(false); });
    group.appendChild(box);
    noButton.focus();
  });
}

function progressOf(key: string): (text: string) => void {
  return (text) => {
    const node = document.querySelector<HTMLElement>(`[data-progress="${key}"]`);
    if (node) node.textContent = text;
  };
}

const WORDS: Record<PolicyAction, { what: string; done: string; expect: (s: Subscription | undefined) => boolean }> = {
  pause: { what: 'pause', done: 'paused: it is not charged until you resume it', expect: (s) => s?.status === 'Paused' },
  resume: { what: 'resume', done: 'resumed: it is charged again from its next due date', expect: (s) => s?.status === 'Active' },
  cancel: { what: 'cancel', done: 'canceled: the policy is deleted on chain and can never be charged again', expect: (s) => s === undefined },
};

async function onPolicyAction(s: Subscription, action: PolicyAction, button: HTMLButtonElement): Promise<void> {
  if (busy) return;
  const name = nameOf(s);
  if (action === 'cancel') {
    const sure = await confirmInline(button.parentElement ?? button, `Cancel the subscription to ${name} for good? To pay again you would subscribe anew.`, 'Yes, cancel it');
    if (!sure) { button.focus(); return; }
  }
  const words = WORDS[action];
  const change: Change = { path: `policies/${encodeURIComponent(s.address)}/${action}`, what: `${words.what} the subscription to ${name}`, progress: progressOf(s.address) };
  setBusy(true);
  try {
    const outcome = await perform(change);
    if (!outcome.confirmed) { if (currentSession()) await load(); return; }
    change.progress('Confirmed on chain. Updating the list…');
    const shown = await reloadUntil((list) => words.expect(list.find((x) => x.address === s.address)));
    const tail = shown ? '' : ' The list catches up in a moment.';
    status.say(`Done: the subscription to ${name} is ${words.done} (transaction ${short(outcome.signature)}).${tail}`, 'ok');
  } finally {
    setBusy(false);
    const heading = document.getElementById(`sub-${s.address}`) ?? byId('subs-title');
    heading.focus();
  }
}

async function onRevoke(d: Delegation, button: HTMLButtonElement): Promise<void> {
  if (busy) return;
  const running = d.subscriptions ? ` ${d.subscriptions} running subscription${d.subscriptions === 1 ? '' : 's'} paid from it stop${d.subscriptions === 1 ? 's' : ''} being charged.` : '';
  const sure = await confirmInline(button.parentElement ?? button, `Revoke the delegation on your ${short(d.mint)} token account?${running}`, 'Yes, revoke');
  if (!sure) { button.focus(); return; }
  setBusy(true);
  try {
    const outcome = await perform({ path: 'approvals/revoke', body: { mint: d.mint }, what: `revoke the delegation on ${short(d.mint)}`, progress: progressOf(d.mint) });
    if (!outcome.confirmed) return;
    revoked.add(d.mint);
    await load();
    status.say(`Done: the delegation on your ${short(d.mint)} token account is revoked; nothing can be charged from it until you approve again (transaction ${short(outcome.signature)}).`, 'ok');
  } finally {
    setBusy(false);
    byId('delegations-title').focus();
  }
}
