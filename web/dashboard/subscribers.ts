/** The subscribers table, paged and filtered by status. */
import { byId, clear, el } from '../shared/dom.js';
import { group, short, when } from '../shared/format.js';
import { messageOf } from '../shared/http.js';
import { api, S, status } from './state.js';
import type { SubscriberPage } from './types.js';

export function keyCell(k: string | null): HTMLTableCellElement {
  return el('td', { className: 'mono', title: k ?? '', text: short(k) });
}

const HEAD = ['Payer', 'Mint', 'Status', 'Policies', 'Total paid', 'Payments', 'Last payment', 'Next due', 'Past due'];

export async function loadSubscribers(): Promise<void> {
  const q = `subscribers?limit=${S.limit}&offset=${S.offset}${S.status ? `&status=${S.status}` : ''}`;
  try {
    const page = await api<SubscriberPage>(q);
    const t = byId('subs-table');
    clear(t);
    t.appendChild(el('thead', null, [el('tr', null, HEAD.map((h, i) => el('th', { scope: 'col', className: i >= 3 && i <= 5 ? 'num' : '', text: h })))]));
    const body = el('tbody');
    for (const s of page.items) {
      body.appendChild(el('tr', null, [keyCell(s.payer), keyCell(s.tokenMint), el('td', null, [el('span', { className: `badge ${s.status}`, text: s.status })]),
        el('td', { className: 'num', text: `${s.activePolicies} / ${s.policies.length}` }), el('td', { className: 'num', text: group(s.totalPaid) }),
        el('td', { className: 'num', text: String(s.payments) }), el('td', { text: when(s.lastPaymentAt) }), el('td', { text: when(s.nextDue) }),
        el('td', { text: s.pastDue ? 'yes' : 'no' })]));
    }
    if (!page.items.length) body.appendChild(el('tr', null, [el('td', { colspan: '9', text: 'No subscribers yet.' })]));
    t.appendChild(body);
    const to = Math.min(S.offset + page.items.length, page.total);
    byId('subs-page').textContent = `${page.total ? `${S.offset + 1}–${to}` : '0'} of ${page.total}`;
    byId('subs-prev', HTMLButtonElement).disabled = S.offset === 0;
    byId('subs-next', HTMLButtonElement).disabled = to >= page.total;
  } catch (err) {
    status.say(`Subscribers: ${messageOf(err)}`, 'error');
  }
}

export function wireSubscribers(): void {
  const filter = byId('subs-status', HTMLSelectElement);
  filter.addEventListener('change', () => { S.status = filter.value; S.offset = 0; void loadSubscribers(); });
  byId('subs-prev').addEventListener('click', () => { S.offset = Math.max(0, S.offset - S.limit); void loadSubscribers(); });
  byId('subs-next').addEventListener('click', () => { S.offset += S.limit; void loadSubscribers(); });
}
