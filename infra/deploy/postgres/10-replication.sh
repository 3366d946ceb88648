#!/bin/bash
# Runs once, when the primary's data directory is created (docker-entrypoint-initdb.d):
# a role for streaming replication and a pg_hba rule letting the replica connect with it.
# The official image's pg_hba.conf allows replication from loopback only.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE ${REPLICATION_USER:-replicator} WITH REPLICATION LOGIN PASSWORD '${REPLICATION_PASSWORD:?set REPLICATION_PASSWORD}';
SQL
echo "host replication ${REPLICATION_USER:-replicator} all scram-sha-256" >> "$PGDATA/pg_hba.conf"
