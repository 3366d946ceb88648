/**
 * Writes rows to an HTTP response as CSV (RFC 4180, header line first) or NDJSON, as
 * they come from a database cursor, a chunk of rows at a time: lines are gathered into
 * pieces of about 64 KiB, each written once the socket has drained the one before, so
 * memory stays flat however long the export. While a chunk is formatted the cursor
 * already fetches the next one (prefetched), so Postgres and this process work at the
 * same time instead of taking turns. A client that goes away stops the read (the cursor
 * is closed by leaving the loop).
 */
import type { Response } from 'express';

export type ExportFormat = 'csv' | 'ndjson';
export type Cell = string | number | boolean | null;

/** what one write holds: small, so that the socket's buffer stays small */
const PIECE_BYTES = 64 * 1024;

/** text a spreadsheet would run as a formula, or that needs quoting */
const NEEDS_CARE = /^[=+\-@\t\r]|[",\r\n]/;

/**
 * One CSV field. Text a spreadsheet would run as a formula (=, +, -, @ first) gets a
 * leading apostrophe; numbers never do.
 */
export function csvField(v: Cell): string {
  if (v === null) return '';
  if (typeof v !== 'string') return String(v);
  if (!NEEDS_CARE.test(v)) return v;
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(cells: readonly Cell[]): string {
  let line = cells.length > 0 ? csvField(cells[0]!) : '';
  for (let i = 1; i < cells.length; i += 1) line += `,${csvField(cells[i]!)}`;
  return `${line}\r\n`;
}

export function ndjsonLine(columns: readonly string[], cells: readonly Cell[]): string {
  const o: Record<string, Cell> = {};
  columns.forEach((c, i) => { o[c] = cells[i] ?? null; });
  return `${JSON.stringify(o)}\n`;
}

/** Resolves when the response drains or closes, leaving no listener behind. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * The chunks of `source` with the next one already requested while the caller works on
 * the current one: at most two chunks exist at a time.
 */
export async function* prefetched<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let next: Promise<IteratorResult<T>> | undefined = it.next();
  try {
    for (;;) {
      const r: IteratorResult<T> = await next;
      next = undefined;
      if (r.done === true) return;
      next = it.next();
      yield r.value;
    }
  } finally {
    // stopped early: let the read in flight end, then close the source (the cursor)
    if (next !== undefined) {
      const last = await next.catch(() => ({ done: true as const, value: undefined }));
      if (last.done !== true) await it.return?.();
    }
  }
}

export async function writeExport(res: Response, format: ExportFormat, columns: readonly string[], chunks: AsyncIterable<readonly unknown[]>, cells: (row: unknown) => readonly Cell[]): Promise<number> {
  let closed = false;
  const onClose = () => { closed = true; };
  res.on('close', onClose);
  let n = 0;
  const write = async (text: string) => {
    if (!res.write(text) && !closed) await drained(res);
  };
  // the header goes out with the first rows: a failed first read still gets the error envelope
  let lines: string[] = format === 'csv' ? [csvLine(columns)] : [];
  let bytes = 0;
  const flush = async () => {
    // lines gathered in an array and joined once per piece: no deep string ropes for the GC
    if (lines.length === 0) return;
    const text = lines.join('');
    lines = [];
    bytes = 0;
    await write(text);
  };
  try {
    for await (const rows of prefetched(chunks)) {
      for (let i = 0; i < rows.length && !closed; i += 1) {
        const c = cells(rows[i]);
        const line = format === 'csv' ? csvLine(c) : ndjsonLine(columns, c);
        lines.push(line);
        bytes += line.length;
        if (bytes >= PIECE_BYTES) await flush();
      }
      n += rows.length;
      if (closed) break;
    }
    if (!closed) {
      await flush();
      res.end();
    }
  } finally {
    res.off('close', onClose);
  }
  return n;
}
