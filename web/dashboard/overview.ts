/** Recent payments, upcoming renewals and webhook health, from the overview route. */
import { byId, clear, el } from '../shared/dom.js';
import { group, short, when } from '../shared/format.js';
import type { Overview, Payment } from './types.js';

export function paymentItem(p: Payment, fresh: boolean): HTMLLIElement {
  const li = el('li', { className: fresh ? 'new' : '' }, [
    el('span', null, [el('strong', { text: group(p.amount) }), ' ', el('span', { className: 'mono', title: p.payer ?? '', text: `from ${short(p.payer)}` })]),
    el('span', { className: 'hint', text: (p.trackingId ? `${p.trackingId} · ` : '') + when(p.at) })]);
  li.setAttribute('data-signature', p.signature);
  return li;
}

function renderWebhooks(ov: Overview): void {
  const t = byId('hooks-table');
  clear(t);
  const head = ['Endpoint', 'Active', 'Delivered 24 h', 'Pending', 'Dead 24 h', 'Last attempt'];
  t.appendChild(el('thead', null, [el('tr', null, head.map((h) => el('th', { scope: 'col', text: h })))]));
  const body = el('tbody');
  for (const w of ov.webhooks) {
    const last = w.lastAttemptAt ? `${w.lastStatus || 'error'} at ${w.lastAttemptAt.slice(0, 16).replace('T', ' ')}` : '—';
    body.appendChild(el('tr', null, [el('td', { className: 'mono', text: w.endpointUrl }), el('td', { text: w.active ? 'yes' : 'no' }),
      el('td', { className: 'num ok', text: String(w.delivered) }), el('td', { className: 'num', text: String(w.pending) }),
      el('td', { className: `num${w.dead ? ' bad' : ''}`, text: String(w.dead) }), el('td', { title: w.lastError ?? '', text: last })]));
  }
  if (!ov.webhooks.length) body.appendChild(el('tr', null, [el('td', { colspan: '6', text: 'No webhooks registered for this gateway.' })]));
  t.appendChild(body);
}

export function renderOverview(ov: Overview): void {
  const live = byId('live');
  clear(live);
  for (const p of ov.recentPayments) live.appendChild(paymentItem(p, false));
  if (!ov.recentPayments.length) live.appendChild(el('li', { className: 'hint empty', text: 'No payments yet.' }));
  const rn = byId('renewals');
  clear(rn);
  for (const r of ov.upcomingRenewals) {
    rn.appendChild(el('li', null, [el('span', { className: 'mono', title: r.policy, text: short(r.policy) }), el('span', { text: when(r.nextDue) })]));
  }
  if (!ov.upcomingRenewals.length) rn.appendChild(el('li', { className: 'hint', text: 'Nothing due.' }));
  renderWebhooks(ov);
}
