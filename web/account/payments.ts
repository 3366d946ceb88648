/** The wallet's payments, newest first, ten to a page (GET /v1/me/payments). */
import { byId, clear, el } from '../shared/dom.js';
import { amount, short, when } from '../shared/format.js';
import { meGet } from './state.js';
import type { Payment, PayerList } from './types.js';

const PAGE = 10;
let offset = 0;

function money(p: Payment): string {
  if (p.amountDisplay !== null) return p.amountDisplay;
  return p.decimals !== null ? amount(p.amount, p.decimals) : `${p.amount} base units`;
}

function key(value: string | null): HTMLElement | string {
  return value ? el('span', { className: 'mono', title: value, text: short(value) }) : '—';
}

function render(rows: readonly Payment[], older: boolean): void {
  const table = byId('payments-table');
  clear(table);
  table.appendChild(el('caption', { className: 'sr-only', text: 'Your payments, newest first' }));
  table.appendChild(el('thead', null, [el('tr', null, ['When', 'Amount', 'Mint', 'Merchant', 'Transaction'].map((h) => el('th', { scope: 'col', text: h, className: h === 'Amount' ? 'num' : undefined })))]));
  table.appendChild(el('tbody', null, rows.map((p) => el('tr', { 'data-signature': p.signature }, [
    el('td', { text: when(p.at) }),
    el('td', { className: 'num', text: money(p) }),
    el('td', null, [key(p.tokenMint)]),
    el('td', null, [key(p.merchant)]),
    el('td', null, [key(p.signature)]),
  ]))));
  byId('payments-empty').hidden = rows.length > 0 || offset > 0;
  byId('payments-prev', HTMLButtonElement).disabled = offset === 0;
  byId('payments-next', HTMLButtonElement).disabled = !older;
  byId('payments-page').textContent = rows.length ? `${offset + 1}–${offset + rows.length}` : '';
}

/** Reads the current page (one row more, to know whether there are older ones). */
export async function loadPayments(): Promise<void> {
  const page = await meGet<PayerList<Payment>>(`payments?limit=${PAGE + 1}&offset=${offset}`);
  render(page.data.slice(0, PAGE), page.data.length > PAGE);
}

export function resetPayments(): void {
  offset = 0;
  clear(byId('payments-table'));
}

export function wirePayments(onError: (err: unknown) => void): void {
  const move = (delta: number) => {
    offset = Math.max(0, offset + delta);
    loadPayments().catch(onError);
  };
  byId('payments-prev').addEventListener('click', () => move(-PAGE));
  byId('payments-next').addEventListener('click', () => move(PAGE));
}
