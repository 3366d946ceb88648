/**
 * A method's result already rendered as JSON text, spliced into the response as it is. A
 * landed transaction never changes, so getTransaction renders each one once per encoding
 * and serves the text after that: stringifying a batch of fifty transactions' logs, keys
 * and balances per request was most of what the localnet's process spent its CPU on,
 * on the cores the indexer and its tests share with it.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

interface Reply { jsonrpc: '2.0'; id: string | number | null; result?: unknown; error?: unknown }

/** A JSON-RPC reply's text; a JsonText result goes in unchanged. */
function replyText(reply: Reply): string {
  if (!(reply.result instanceof JsonText)) return JSON.stringify(reply);
  return `{"jsonrpc":"2.0","id":${JSON.stringify(reply.id)},"result":${reply.result.text}}`;
}

/** A single reply's text, or a batch's (an array of replies). */
export function responseText(body: Reply | readonly Reply[]): string {
  return Array.isArray(body) ? `[${(body as readonly Reply[]).map(replyText).join(',')}]` : replyText(body as Reply);
}
