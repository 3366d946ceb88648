/**
 * Import first in a test that runs @solana/kit's RPC (the @x402/svm clients) in a process
 * that also loads the npm `undici` (infra/http/post-json.ts, the webhook worker): that
 * package installs its own Agent as the global dispatcher when none exists yet, and Node's
 * built-in fetch then hands it headers it refuses ("invalid content-length header", the
 * header kit's transport sets). A first built-in fetch creates Node's own dispatcher, which
 * undici then leaves alone. The request itself goes nowhere (port 1).
 */
void fetch('http://127.0.0.1:1/').catch(() => undefined);
