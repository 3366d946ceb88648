/**
 * URLs a request gives (webhook endpoints, checkout redirects) are kept in their parsed
 * form; before parsing, what the parser would silently drop is refused instead: C0 and C1
 * controls, DEL (it strips tabs and newlines anywhere and controls and spaces at either
 * end, so the URL kept would not be the one given, and PostgreSQL cannot store a NUL),
 * and whitespace at either end.
 */
import { invalid } from './errors.js';

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A 400 naming `field` when `value` holds a control character or begins or ends with whitespace. */
export function refuseUrlControls(value: string, field: string): void {
  if (CONTROL.test(value)) throw invalid(`${field} must not contain control characters`);
  if (value.trim() !== value) throw invalid(`${field} must not begin or end with whitespace`);
}
