'use strict';
/**
 * autocannon's setupRequest for the read mix (its worker thread requires a file): each
 * request takes the next path of the sampled mix that BENCH_READS_PATHS names.
 */
const { readFileSync } = require('node:fs');

const paths = JSON.parse(readFileSync(process.env.BENCH_READS_PATHS, 'utf8'));
let next = Math.floor(Math.random() * paths.length);

module.exports = function setupRequest(req) {
  next = (next + 1) % paths.length;
  return { ...req, path: paths[next] };
};
