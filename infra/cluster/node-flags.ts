/**
 * Options for node itself in every process of the service: `make start`, `make cluster`'s
 * roles, the image's entrypoint (infra/deploy/Dockerfile), the processes tests and benches
 * start. Kept in step by hand in the Makefile and the Dockerfile, which cannot import it.
 *
 * --max-semi-space-size=32: V8's young generation on semi-spaces of 32 MB, twice node 20's
 * default: a projector's read-ahead of parsed entries no longer gets copied by each
 * scavenge. It costs up to some 48 MB a process (figures: test/bench/README.md, "Settings
 * the benchmarks chose").
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
