#!/usr/bin/env bash
# wrk, the load generator `make bench` drives the API with, installed from Debian's packages
# when missing. It is a C client, as light as pgbench on the baselines' side; without it the
# benches fall back to autocannon, a Node process that takes as much of the two cores as the
# API it measures. pgbench itself comes with PostgreSQL.
set -euo pipefail
command -v wrk >/dev/null 2>&1 && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo -n"
echo "installing wrk for the benches"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk
