/** Export buttons: the merchant route's file (CSV or NDJSON), downloaded through a blob link. */
import { byId, el } from '../shared/dom.js';
import { ApiError, messageOf } from '../shared/http.js';
import { base, S, status } from './state.js';

async function download(button: HTMLButtonElement): Promise<void> {
  const kind = button.getAttribute('data-export') ?? '';
  const fmt = byId('export-format', HTMLSelectElement).value;
  const q = `export/${kind}?format=${fmt}${kind === 'revenue' ? `&bucket=${S.bucket}` : ''}`;
  button.disabled = true;
  status.say(`Preparing the ${kind} export…`);
  try {
    const r = await fetch(base() + q, { headers: { authorization: `Bearer ${S.token ?? ''}` } });
    if (!r.ok) {
      const e = (await r.json().catch(() => ({}))) as { error?: string };
      throw new ApiError(e.error ?? `HTTP ${r.status}`, r.status, undefined);
    }
    const m = /filename="([^"]+)"/.exec(r.headers.get('content-disposition') ?? '');
    const blob = await r.blob();
    const a = el('a', { href: URL.createObjectURL(blob), download: m?.[1] ?? `${kind}.${fmt}` });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    status.say(`Exported ${kind}.`);
  } catch (err) {
    status.say(`Export failed: ${messageOf(err)}`, 'error');
  } finally {
    button.disabled = false;
  }
}

export function wireExports(): void {
  for (const b of document.querySelectorAll<HTMLButtonElement>('[data-export]')) b.addEventListener('click', () => void download(b));
}
