/**
 * Bench-only preload (`node --require`): every BUCKET_MS of wall-clock time, one line on
 * stderr saying how late the event loop ran (the worst delay of a 5 ms timer) and how long
 * the garbage collector paused it, so ./webhooks.ts can line a slow delivery up with the
 * process that stalled. Costs a 5 ms timer; not loaded outside the bench.
 *
 * Line: `LOOPPROBE {"pid","t" (bucket start, ms since the epoch),"lag","gc","gcMax","cpu" (ms of CPU)}`.
 */
'use strict';
const { PerformanceObserver } = require('node:perf_hooks');

const BUCKET_MS = 500;
const TICK_MS = 5;
const bucketOf = (t) => Math.floor(t / BUCKET_MS) * BUCKET_MS;

let bucket = bucketOf(Date.now());
let lag = 0;
let gc = 0;
let gcMax = 0;
let expected = Date.now() + TICK_MS;
let cpuAt = process.cpuUsage();

function flush(now) {
  const b = bucketOf(now);
  if (b === bucket) return;
  const used = process.cpuUsage(cpuAt);
  cpuAt = process.cpuUsage();
  const cpu = Math.round((used.user + used.system) / 1000);
  process.stderr.write(`LOOPPROBE ${JSON.stringify({ pid: process.pid, t: bucket, lag, gc: Math.round(gc), gcMax: Math.round(gcMax), cpu })}\n`);
  bucket = b;
  lag = 0;
  gc = 0;
  gcMax = 0;
}

const timer = setInterval(() => {
  const now = Date.now();
  lag = Math.max(lag, now - expected);
  expected = now + TICK_MS;
  flush(now);
}, TICK_MS);
timer.unref();

const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc += e.duration;
    gcMax = Math.max(gcMax, e.duration);
  }
});
obs.observe({ entryTypes: ['gc'] });
