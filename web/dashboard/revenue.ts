/** Revenue and MRR: the key figures, an SVG chart and the table of buckets, per mint. */
import { byId, clear, el, svg } from '../shared/dom.js';
import { group, short, when } from '../shared/format.js';
import { messageOf } from '../shared/http.js';
import { api, S, status } from './state.js';
import type { Bucket, Revenue } from './types.js';

type Numeric = 'gross' | 'gatewayFee' | 'protocolFee' | 'net' | 'mrr';

const sum = (list: readonly Bucket[], k: Numeric): string => list.reduce((a, b) => a + BigInt(b[k]), 0n).toString();

function renderKpis(b: readonly Bucket[]): void {
  const dl = byId('kpis');
  clear(dl);
  const last = b[b.length - 1];
  const count = (k: 'payments' | 'newSubscriptions' | 'endedSubscriptions') => b.reduce((a, x) => a + x[k], 0);
  const kpis: [string, string][] = [
    ['Gross', group(sum(b, 'gross'))], ['Net', group(sum(b, 'net'))],
    ['Fees', group(BigInt(sum(b, 'gatewayFee')) + BigInt(sum(b, 'protocolFee')))],
    ['Payments', group(count('payments'))], ['MRR now', group(last ? last.mrr : '0')],
    ['New / ended', `${count('newSubscriptions')} / ${count('endedSubscriptions')}`],
  ];
  for (const [k, v] of kpis) dl.appendChild(el('div', null, [el('dt', { text: k }), el('dd', { text: v })]));
}

function renderChart(b: readonly Bucket[]): void {
  const [W, H, L, R, T, B] = [800, 260, 8, 8, 16, 28];
  const box = byId('chart');
  clear(box);
  const nets = b.map((x) => Number(x.net));
  const mrrs = b.map((x) => Number(x.mrr));
  const maxNet = Math.max(...nets, 1);
  const maxMrr = Math.max(...mrrs, 1);
  const last = b[b.length - 1];
  const first = b[0];
  const s = svg('svg', {
    viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': `Net revenue per ${S.bucket} over ${b.length} buckets, ${group(sum(b, 'net'))} in all; MRR now ${group(last ? last.mrr : '0')}`,
  });
  const step = (W - L - R) / Math.max(b.length, 1);
  b.forEach((x, i) => {
    const h = ((H - T - B) * (nets[i] ?? 0)) / maxNet;
    const r = svg('rect', { x: L + i * step + step * 0.1, y: H - B - h, width: Math.max(step * 0.8, 1), height: h, class: 'bar' });
    r.appendChild(svg('title', {}, `${when(x.start)}: net ${group(x.net)}, ${x.payments} payments, MRR ${group(x.mrr)}`));
    s.appendChild(r);
  });
  if (first && last) {
    const pts = b.map((_, i) => `${(L + i * step + step / 2).toFixed(1)},${(H - B - ((H - T - B) * (mrrs[i] ?? 0)) / maxMrr).toFixed(1)}`).join(' ');
    s.appendChild(svg('polyline', { points: pts, class: 'mrr' }));
    s.appendChild(svg('text', { x: L, y: H - 8 }, when(first.start).slice(0, 10)));
    s.appendChild(svg('text', { x: W - R, y: H - 8, 'text-anchor': 'end' }, when(last.start).slice(0, 10)));
    s.appendChild(svg('text', { x: L, y: 12 }, `net max ${group(Math.round(maxNet))} · MRR max ${group(Math.round(maxMrr))}`));
  }
  box.appendChild(s);
}

const COLUMNS: [keyof Bucket, string][] = [['start', 'Bucket'], ['gross', 'Gross'], ['gatewayFee', 'Gateway fee'], ['protocolFee', 'Protocol fee'],
  ['net', 'Net'], ['payments', 'Payments'], ['newSubscriptions', 'New'], ['endedSubscriptions', 'Ended'], ['mrr', 'MRR']];

function renderTable(b: readonly Bucket[]): void {
  const t = byId('revenue-table');
  clear(t);
  const cls = (k: keyof Bucket) => (k === 'start' ? '' : 'num');
  t.appendChild(el('thead', null, [el('tr', null, COLUMNS.map(([k, h]) => el('th', { scope: 'col', className: cls(k), text: h })))]));
  const body = el('tbody');
  for (const x of [...b].reverse()) {
    body.appendChild(el('tr', null, COLUMNS.map(([k]) => el('td', { className: cls(k), text: k === 'start' ? when(x.start).slice(0, 10) : group(x[k]) }))));
  }
  t.appendChild(body);
}

function fillMints(r: Revenue): void {
  const sel = byId('mint', HTMLSelectElement);
  if (sel.options.length > 0 && S.mint) return;
  const mints = r.series.map((s) => s.tokenMint);
  clear(sel);
  for (const m of mints) sel.appendChild(el('option', { value: m, text: short(m) }));
  if (!S.mint && mints[0]) S.mint = mints[0];
  sel.value = S.mint ?? '';
}

export async function loadRevenue(): Promise<void> {
  const q = `revenue?bucket=${S.bucket}${S.mint ? `&tokenMint=${encodeURIComponent(S.mint)}` : ''}`;
  try {
    const r = await api<Revenue>(q);
    fillMints(r);
    const buckets = r.series.find((s) => s.tokenMint === S.mint)?.buckets ?? [];
    renderKpis(buckets);
    renderChart(buckets);
    renderTable(buckets);
  } catch (err) {
    status.say(`Revenue: ${messageOf(err)}`, 'error');
  }
}

export function wireRevenue(): void {
  const bucket = byId('bucket', HTMLSelectElement);
  const mint = byId('mint', HTMLSelectElement);
  bucket.addEventListener('change', () => { S.bucket = bucket.value; void loadRevenue(); });
  mint.addEventListener('change', () => { S.mint = mint.value; void loadRevenue(); });
}
