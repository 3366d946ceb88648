/** What the payer agrees to, in words: who is paid, how much, how often, the fees and the first charge. */
import { byId, clear, el, type Child } from '../shared/dom.js';
import { period, short, whenIso } from '../shared/format.js';
import type { Money, PublicSession, Schedule } from './session.js';

function key(k: string): HTMLElement {
  return el('span', { className: 'mono', title: k, text: short(k) });
}

/** The token's name: the currency the merchant gave, unless that is only the mint's address. */
export function unit(s: PublicSession): string {
  return s.currency && s.currency !== s.tokenMint && s.currency.length <= 12 ? s.currency : `tokens (${short(s.tokenMint)})`;
}

const money = (m: Money, s: PublicSession) => `${m.ui} ${unit(s)}`;
const percent = (bps: number) => `${bps / 100}%`;

function howOften(sc: Schedule, s: PublicSession): string {
  const every = sc.periodSeconds ? `every ${period(sc.periodSeconds)}` : '';
  switch (sc.kind) {
    case 'subscription': {
      const renewals = sc.autoRenew === false ? ', without renewing' : sc.maxRenewals ? `, at most ${sc.maxRenewals} times` : ', until you cancel';
      return `${sc.paymentFrequency ?? every}${sc.paymentFrequency && every ? ` (${every})` : ''}${renewals}`;
    }
    case 'pay-as-you-go':
      return `as you use it, up to ${sc.maxAmountPerPeriod ? money(sc.maxAmountPerPeriod, s) : 'the cap'} ${every || 'per period'}`;
    case 'up-to':
      return 'once, up to the amount';
    case 'prepaid':
      return `once: a credit${sc.pricePerRequest ? ` at ${money(sc.pricePerRequest, s)} a request` : ''}`;
  }
}

function feesText(s: PublicSession): string {
  const f = s.fees;
  if (!f) return 'none beyond the amount';
  const fee = `${percent(f.gatewayFeeBps)} (${money(f.gatewayFee, s)}, of which ${money(f.protocolFee, s)} to the protocol)`;
  return f.netMode
    ? `${fee} on top: you pay ${money(f.payerPays, s)}, the merchant receives ${money(f.recipientReceives, s)}`
    : `${fee}, included: the merchant receives ${money(f.recipientReceives, s)}`;
}

function firstChargeText(s: PublicSession): string {
  if (!s.firstCharge) return 'nothing now: charged as you use it';
  return `${money(s.firstCharge.amount, s)}, ${s.firstCharge.at}`;
}

export function renderTerms(s: PublicSession): void {
  byId('title').textContent = s.label || (s.schedule.kind === 'subscription' ? 'Subscribe' : 'Pay');
  const dl = byId('terms');
  clear(dl);
  const rows: [string, Child, string?][] = [
    ['Pay to', key(s.payee.recipient)],
    ['Amount', money(s.amount, s), 'amount'],
    ['How often', howOften(s.schedule, s)],
    ['Fees', feesText(s)],
    ['First charge', firstChargeText(s)],
    ['Gateway', key(s.payee.gateway)],
    ['Offer ends', whenIso(s.expiresAt)],
  ];
  for (const [term, value, cls] of rows) {
    dl.appendChild(el('dt', { text: term }));
    dl.appendChild(el('dd', cls ? { className: cls } : null, [value]));
  }
  dl.hidden = false;
}
