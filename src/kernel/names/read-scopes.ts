/**
 * The keys a cached answer can depend on, named alike by the projections that change
 * them and the routes that read them (infra/cache/read-cache.ts): a list of a gateway's
 * policies depends on `gateway:<key>` of the payment-policies model, and a commit that
 * wrote a policy of that gateway names that key. Each model has its own versions, so the
 * same name in two models is two keys.
 *
 * The contract: a projection names every key whose answers its batch may have changed,
 * old and new values alike (a row moving from one key to another changes both lists);
 * a route names keys only when its answer reads nothing but rows that carry them.
 */
export const readScope = {
  /** archive: events of a name */
  name: (eventName: string) => `name:${eventName}`,
  /** archive, payment policies: rows of a memo, its exact stored bytes (a trackingId's encodings) */
  memo: (memo: Buffer) => `memo:${memo.toString('hex')}`,
  /** memo, from the stored bytes' hex (lower case, as Buffer's toString('hex')) */
  memoHex: (hex: string) => `memo:${hex}`,
  /** payment policies, payments, payment stats: rows of a gateway */
  gateway: (gateway: string) => `gateway:${gateway}`,
  /** payment policies: rows of a recipient */
  recipient: (recipient: string) => `recipient:${recipient}`,
  /** payments: executions of a policy */
  policy: (policy: string) => `policy:${policy}`,
} as const;
