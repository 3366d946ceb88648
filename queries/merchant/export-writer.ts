/**
 * Writes rows to an HTTP response as CSV (RFC 4180, header line first) or NDJSON, as
 * they come from a database cursor: lines are gathered into chunks of about 64 KiB and
 * each chunk waits for the socket to drain before the next is read, so memory stays
 * flat however long the export. A client that goes away stops the read (the cursor is
 * closed by leaving the loop).
 */
import type { Response } from 'express';

export type ExportFormat = 'csv' | 'ndjson';
export type Cell = string | number | boolean | null;

const CHUNK_BYTES = 64 * 1024;

/**
 * One CSV field. Text a spreadsheet would run as a formula (=, +, -, @ first) gets a
 * leading apostrophe; numbers never do.
 */
export function csvField(v: Cell): string {
  if (v === null) return '';
  if (typeof v !== 'string') return String(v);
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(cells: readonly Cell[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
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

export async function writeExport(res: Response, format: ExportFormat, columns: readonly string[], rows: AsyncIterable<unknown>, cells: (row: unknown) => readonly Cell[]): Promise<number> {
  let closed = false;
  const onClose = () => { closed = true; };
  res.on('close', onClose);
  // lines gathered in an array and joined once per chunk: no deep string ropes for the GC
  let lines: string[] = format === 'csv' ? [csvLine(columns)] : [];
  let bytes = 0;
  let n = 0;
  const flush = async () => {
    if (lines.length === 0) return;
    const ok = res.write(lines.join(''));
    lines = [];
    bytes = 0;
    if (!ok && !closed) await drained(res);
  };
  try {
    for await (const row of rows) {
      if (closed) break;
      const c = cells(row);
      const line = format === 'csv' ? csvLine(c) : ndjsonLine(columns, c);
      lines.push(line);
      bytes += line.length;
      n += 1;
      if (bytes >= CHUNK_BYTES) await flush();
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
