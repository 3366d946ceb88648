#!/usr/bin/env bash
# `make compose-test`: the images (infra/deploy/images.sh), then infra/deploy/compose.yaml up
# on this machine with fresh secrets, the walkthrough, restarts under load and the checks
# (test/compose/run.ts), then the stack torn down, volumes included. Needs a Docker engine;
# not part of `make test`. COMPOSE_TEST_KEEP=1 leaves the stack up; COMPOSE picks the
# compose command (default: `docker compose` when the plugin answers, else docker-compose).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

docker info >/dev/null 2>&1 || { echo "compose-test: no Docker engine answers" >&2; exit 1; }
if [ -z "${COMPOSE:-}" ]; then
  if docker compose version >/dev/null 2>&1; then COMPOSE="docker compose"; else COMPOSE=docker-compose; fi
fi
export COMPOSE COMPOSE_PROJECT="${COMPOSE_PROJECT:-tributary-test}"
compose() { $COMPOSE -p "$COMPOSE_PROJECT" -f infra/deploy/compose.yaml "$@"; }

# COMPOSE_TEST_BUILD=0: the tributary:latest already here, as it is
if [ "${COMPOSE_TEST_BUILD:-1}" = 1 ]; then
  images_out="$(bash infra/deploy/images.sh)"
  IMAGE_MB="${images_out#image_mb=}"
else
  IMAGE_MB=$(($(docker image inspect -f '{{.Size}}' tributary:latest) / 1000000))
fi
export IMAGE_MB IMAGE_MAX_MB="${IMAGE_MAX_MB:-500}"

# fresh secrets for this run; the ports of env.example unless set
export POSTGRES_PASSWORD="pg-$(openssl rand -hex 12)" REPLICATION_PASSWORD="repl-$(openssl rand -hex 12)"
export SIGNING_KEY_ENCRYPTION_KEY="$(openssl rand -hex 32)" ADMIN_API_KEY="admin-$(openssl rand -hex 12)"
export HTTP_PORT="${HTTP_PORT:-8080}" LOCALNET_PORT="${LOCALNET_PORT:-28899}" PG_PORT="${PG_PORT:-25432}"
export PUBLIC_BASE_URL="http://localhost:$HTTP_PORT" SOLANA_RPC_URL="http://127.0.0.1:$LOCALNET_PORT"

compose config -q
teardown() {
  if [ "${COMPOSE_TEST_KEEP:-0}" = 1 ]; then echo "compose-test: stack $COMPOSE_PROJECT left up"; return; fi
  mkdir -p tmp; compose logs --no-color --tail 200 >"${COMPOSE_TEST_LOG:-tmp/compose-test.log}" 2>&1 || true
  compose down -v --remove-orphans >/dev/null 2>&1 || true
}
trap teardown EXIT
compose down -v --remove-orphans >/dev/null 2>&1 || true
node --import tsx test/compose/run.ts
