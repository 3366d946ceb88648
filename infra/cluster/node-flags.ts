/**
 * Options for node itself in every process of the service: `make start`, `make cluster`'s
 * roles, the image's entrypoint (infra/deploy/Dockerfile), the processes tests and benches
 * start. Kept in step by hand in the Makefile and the Dockerfile, which cannot import it.
 *
 * --max-semi-space-size=32: V8's young generation on semi-spaces of 32 MB, twice node 20's
 * 16 MB. A projector holds a read-ahead of up to 10,000 parsed entries while it renders a
 * batch's rows; with the smaller young generation each scavenge copied them again. Live
 * build of 100k events, two runs each, the same minutes: payments 33,429 and 26,941
 * events/s with 704 and 755 ms of GC, against 37,045 and 33,195 with 463 and 549 ms;
 * archive 29,461 and 27,334 against 30,196 and 29,118. It costs some 48 MB of memory a
 * process at most, and a scavenge that has more to scan when it runs.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
