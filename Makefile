# The two commands that matter: `make start` (the service) and `make test` (the tests).
# Each installs what is missing first, so both work on a fresh machine.
SHELL := /bin/bash
.DEFAULT_GOAL := start
NODE_BIN := node_modules/.bin
export PATH := $(CURDIR)/$(NODE_BIN):$(PATH)

.PHONY: start test install build services typecheck lint circular unit integration e2e bench cluster soak images compose-test clean

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

dist/.built: node_modules/.installed tsconfig.json tsconfig.build.json $(shell find src projections commands queries infra web -name '*.ts' -o -name '*.json' -o -name '*.css' -o -name '*.html' 2>/dev/null)
	$(NODE_BIN)/tsc -p tsconfig.build.json
	node dist/infra/http/web-build.js
	@touch $@

build: dist/.built

# PostgreSQL and Redis as this kind of machine runs them; started when they are down.
services:
	@bash infra/scripts/services-up.sh

# Without SIGNING_KEY_ENCRYPTION_KEY, `make start` runs in the loudly announced development mode.
# node's options as in every process of the service (infra/cluster/node-flags.ts).
start: build services
	@if [ -z "$$SIGNING_KEY_ENCRYPTION_KEY" ]; then export TRIBUTARY_DEV_MODE=$${TRIBUTARY_DEV_MODE:-true}; fi; \
	  exec node --max-semi-space-size=32 dist/src/app/cli/bin.js start

typecheck: install
	npm run --silent typecheck

lint: install
	$(NODE_BIN)/eslint --max-warnings 0 .
	$(NODE_BIN)/depcruise --config .dependency-cruiser.cjs src projections commands queries infra test web

circular: install
	$(NODE_BIN)/madge --circular --extensions ts --ts-config tsconfig.json src projections commands queries infra test

TESTS := 'test/unit/**/*.test.ts' 'test/integration/**/*.test.ts' 'test/e2e/**/*.test.ts' 'test/fuzz/**/*.test.ts'

test: install services typecheck lint circular
	$(NODE_BIN)/mocha $(TESTS)

unit: install
	$(NODE_BIN)/mocha 'test/unit/**/*.test.ts'

bench: build services
	@bash infra/scripts/bench-tools.sh
	node --import tsx test/bench/run.ts

# The service as separate processes behind nginx on PORT, with a streaming replica for
# reads; Ctrl-C stops everything (infra/README.md lists its settings).
cluster: build services
	node dist/infra/cluster/main.js

# Load with faults on a private cluster and a hostile localnet, loopback only, bounded in time
# (SOAK_SECONDS); SOAK_RUNS runs in a row, SOAK_CPU_HOG=1 keeps a core busy beside each. Then the
# money model long (MODEL_RUNS seeds of MODEL_ACTIONS actions, on the machine's PostgreSQL and Redis).
soak: build
	node --import tsx test/soak/runs.ts
	@bash infra/scripts/services-up.sh
	node --import tsx test/soak/money-model.ts

# The container images (infra/deploy/images.sh: the base images too when no registry answers),
# and the whole stack of infra/deploy/compose.yaml proven on this machine (docs/deploy.md).
# Both need a Docker engine; neither is part of `make test`.
images:
	@bash infra/deploy/images.sh

compose-test: install
	@bash test/compose/compose-test.sh

clean:
	rm -rf dist
