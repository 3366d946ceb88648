/** A message of the page's own (no wallet, the wrong account), shown as it is. */
export class PageError extends Error {
  override readonly name = 'PageError';
}
