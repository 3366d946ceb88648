/**
 * Imported before the npm `undici` (post-json.ts): on its first load that package makes
 * its own Agent the process's global dispatcher when none exists yet, and Node's built-in
 * fetch then sends every request through it. The two undici versions disagree on headers
 * (a fetch that sets content-length, as @solana/kit's RPC transport does, fails with
 * "invalid content-length header"). Node loads its own undici on the first fetch call,
 * which installs Node's dispatcher; the npm package then leaves it alone. So one call
 * first, of a data: URL (no network). Our outbound POSTs name their own Agent, so nothing
 * of ours needs the global one.
 */
void fetch('data:,').catch(() => undefined);
export {};
