#!/bin/bash
# The read replica: on first start, a base backup of the primary with -R (standby.signal
# and primary_conninfo written), then the server as a hot standby.
set -euo pipefail
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  export PGPASSWORD="$REPLICATION_PASSWORD"
  until pg_basebackup -h "${PRIMARY_HOST:-postgres}" -p "${PRIMARY_PORT:-5432}" -U "${REPLICATION_USER:-replicator}" -D "$PGDATA" -R -X stream -c fast; do
    echo "waiting for the primary"; rm -rf "${PGDATA:?}"/*; sleep 2
  done
  chmod 0700 "$PGDATA"
fi
exec postgres -c hot_standby=on -c cluster_name=tributary-replica
