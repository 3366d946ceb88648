/** What the payer agrees to, in words: who is paid, how much, how often, the fees and the first charge. */
import { byId, clear, el, type Child } from '../shared/dom.js';
import { amount, group, period, short, whenIso } from '../shared/format.js';
import type { PublicSession } from './session.js';

function key(k: string): HTMLElement {
  return el('span', { className: 'mono', title: k, text: short(k) });
}

/** An amount field as the session gives it: base units with the session's decimals, or words already. */
function money(v: unknown, s: PublicSession): string {
  if (typeof v === 'string' && /^\d+$/.test(v)) return `${amount(v, s.decimals)} ${tokenName(s)}`;
  if (typeof v === 'number' && Number.isInteger(v)) return `${amount(BigInt(v), s.decimals)} ${tokenName(s)}`;
  if (typeof v === 'string') return v;
  return '—';
}

function tokenName(s: PublicSession): string {
  return `tokens (${short(s.tokenMint)})`;
}

function howOften(s: PublicSession): string {
  if (typeof s.period === 'number') return `every ${period(s.period)}`;
  if (typeof s.frequency === 'string' && s.frequency) return s.frequency;
  if (typeof s.period === 'string' && s.period) return s.period;
  return s.scheme === 'subscription' ? 'recurring' : 'once';
}

/** Fees as the session lists them: each named part in words. */
function fees(v: unknown, s: PublicSession): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'string' || typeof v === 'number') return money(v, s);
  if (typeof v !== 'object') return '—';
  const parts: string[] = [];
  for (const [name, part] of Object.entries(v as Record<string, unknown>)) {
    if (part === null || part === undefined || typeof part === 'object') continue;
    const words = name.replace(/([A-Z])/g, ' $1').toLowerCase();
    const shown = /bps$/i.test(name) ? `${Number(part) / 100}%` : money(part, s);
    parts.push(`${words.replace(/ ?bps$/, '')}: ${shown}`);
  }
  return parts.length ? parts.join(', ') : 'none';
}

function firstCharge(v: unknown, s: PublicSession): string {
  if (v === null || v === undefined) return 'when you confirm';
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const sum = o['amount'] !== undefined ? money(o['amount'], s) : '';
    const at = o['at'] ?? o['when'] ?? o['dueAt'];
    const time = typeof at === 'string' || typeof at === 'number' ? whenIso(at) : 'now';
    return sum ? `${sum}, ${time}` : time;
  }
  return typeof v === 'string' && !/^\d+$/.test(v) ? v : money(v, s);
}

export function renderTerms(s: PublicSession): void {
  byId('title').textContent = s.label || (s.scheme === 'subscription' ? 'Subscribe' : 'Pay');
  const dl = byId('terms');
  clear(dl);
  const rows: [string, Child, string?][] = [
    ['Pay to', key(s.recipient)],
    ['Amount', s.amountUi ? `${group(s.amountUi)} ${tokenName(s)}` : money(s.amount, s), 'amount'],
    ['How often', howOften(s)],
    ['Fees', fees(s.fees, s)],
    ['First charge', firstCharge(s.firstCharge, s)],
    ['Through gateway', key(s.gateway)],
    ['Offer ends', whenIso(s.expiresAt ?? null)],
  ];
  for (const [term, value, cls] of rows) {
    dl.appendChild(el('dt', { text: term }));
    dl.appendChild(el('dd', cls ? { className: cls } : null, [value]));
  }
  dl.hidden = false;
}
