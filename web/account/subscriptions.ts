/**
 * A subscription as a card: who is paid (the gateway and its merchant), the scheme, the
 * status, the amount with the mint's decimals, when it is next due and what is paid
 * through, the last payments, and the actions its status allows.
 */
import { el, type Child } from '../shared/dom.js';
import { amount, period, short, when } from '../shared/format.js';
import type { PolicyAction, Subscription } from './types.js';

/** What a payer can do with a policy in this status. */
export function actionsFor(status: string): PolicyAction[] {
  if (status === 'Active') return ['pause', 'cancel'];
  if (status === 'Paused') return ['resume', 'cancel'];
  return ['cancel'];
}

const LABEL: Record<PolicyAction, string> = { pause: 'Pause', resume: 'Resume', cancel: 'Cancel subscription' };

export function nameOf(s: Subscription): string {
  return s.gatewayName ?? `merchant ${short(s.merchant)}`;
}

function key(value: string | null): Child {
  return value ? el('span', { className: 'mono', title: value, text: short(value) }) : '—';
}

/** The amount with decimals when the chain said them, else in base units. */
function money(display: string | null, base: string | null, decimals: number | null): string {
  if (display !== null) return display;
  if (base === null) return '—';
  return decimals !== null ? amount(base, decimals) : `${base} base units`;
}

function fact(term: string, ...value: Child[]): HTMLElement {
  return el('div', null, [el('dt', { text: term }), el('dd', null, value)]);
}

function lastPayments(s: Subscription): HTMLElement {
  if (s.lastPayments.length === 0) return el('p', { className: 'hint', text: 'No payment yet.' });
  return el('ol', { className: 'payments', 'aria-label': `Last payments to ${nameOf(s)}` }, s.lastPayments.map((p) => el('li', null, [
    el('span', { text: when(p.at) }),
    el('span', { className: 'num', text: money(p.amountDisplay, p.amount, s.decimals) }),
    el('span', { className: 'mono', title: p.signature, text: short(p.signature) }),
  ])));
}

export function subscriptionCard(s: Subscription, onAction: (s: Subscription, action: PolicyAction, button: HTMLButtonElement) => void): HTMLElement {
  const titleId = `sub-${s.address}`;
  const every = s.frequencySeconds ? ` every ${period(s.frequencySeconds)}` : '';
  const due = s.status === 'Paused'
    ? `not while paused${s.nextPaymentDue !== null ? `; on resume, the period due ${when(s.nextPaymentDue)} is charged` : ''}`
    : when(s.nextPaymentDue);
  const buttons = actionsFor(s.status).map((action) => {
    const button = el('button', {
      type: 'button', className: action === 'cancel' ? 'danger' : 'secondary', text: LABEL[action],
      'data-action': action, 'aria-describedby': titleId,
    });
    button.addEventListener('click', () => onAction(s, action, button));
    return button;
  });
  return el('li', { className: 'sub', 'data-policy': s.address, 'data-status': s.status }, [
    el('article', { 'aria-labelledby': titleId }, [
      el('div', { className: 'sub-head' }, [
        el('h3', { id: titleId, tabindex: '-1', text: nameOf(s) }),
        el('span', { className: `badge ${s.status.toLowerCase()}`, text: s.status }),
      ]),
      el('dl', { className: 'facts' }, [
        fact('Amount', el('strong', { className: 'num', text: money(s.amountDisplay, s.amount, s.decimals) }), ' ', key(s.tokenMint), every),
        fact('Next due', due),
        fact('Paid through', when(s.paidThrough)),
        fact('Paid so far', `${money(s.totalPaidDisplay, s.totalPaid, s.decimals)} in ${s.paymentCount} payment${s.paymentCount === 1 ? '' : 's'}`),
        fact('Gateway', s.gatewayName ? `${s.gatewayName} ` : '', key(s.gateway)),
        fact('Merchant', key(s.merchant)),
        fact('Scheme', s.scheme ?? '—', ` (${s.variant})`),
        fact('Policy', key(s.address)),
        s.trackingId ? fact('Reference', s.trackingId) : null,
      ]),
      el('h4', { text: 'Last payments' }),
      lastPayments(s),
      el('div', { className: 'actions', role: 'group', 'aria-label': `Change the subscription to ${nameOf(s)}` }, buttons),
      el('p', { className: 'progress', 'data-progress': s.address }),
    ]),
  ]);
}
