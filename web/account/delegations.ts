/**
 * The token accounts the wallet pays from, one per mint (from its subscriptions and its
 * payments, canceled policies' included), each with "Revoke delegation".
 */
import { el } from '../shared/dom.js';
import { short } from '../shared/format.js';
import type { Payment, Subscription } from './types.js';

export interface Delegation { mint: string; subscriptions: number }

export function delegationsOf(subs: readonly Subscription[], payments: readonly Payment[]): Delegation[] {
  const counts = new Map<string, number>();
  for (const s of subs) if (s.tokenMint) counts.set(s.tokenMint, (counts.get(s.tokenMint) ?? 0) + (s.status === 'Completed' ? 0 : 1));
  for (const p of payments) if (p.tokenMint && !counts.has(p.tokenMint)) counts.set(p.tokenMint, 0);
  return [...counts].map(([mint, subscriptions]) => ({ mint, subscriptions })).sort((a, b) => b.subscriptions - a.subscriptions || a.mint.localeCompare(b.mint));
}

export function delegationRow(d: Delegation, revoked: boolean, onRevoke: (d: Delegation, button: HTMLButtonElement) => void): HTMLElement {
  const labelId = `mint-${d.mint}`;
  const uses = d.subscriptions === 0 ? 'no running subscription' : `${d.subscriptions} running subscription${d.subscriptions === 1 ? '' : 's'}`;
  const button = el('button', { type: 'button', className: 'danger', text: 'Revoke delegation', 'data-action': 'revoke', 'aria-describedby': labelId });
  button.addEventListener('click', () => onRevoke(d, button));
  return el('li', { className: 'delegation', 'data-mint': d.mint }, [
    el('div', { id: labelId }, [
      el('span', null, ['Token account of mint ', el('span', { className: 'mono', title: d.mint, text: short(d.mint) })]),
      el('span', { className: 'hint', text: ` · ${uses}` }),
      revoked ? el('span', { className: 'ok', text: ' · revoked' }) : null,
    ]),
    button,
    el('p', { className: 'progress', 'data-progress': d.mint }),
  ]);
}
