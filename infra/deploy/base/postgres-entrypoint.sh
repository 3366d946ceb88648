#!/bin/bash
# The official postgres image's entrypoint, reduced to what this repository uses: as root,
# own PGDATA and go on as postgres; on an empty PGDATA, initdb, the password, the database,
# the init scripts (through a server on the socket only), then the server on every address.
set -Eeuo pipefail
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"; chown postgres:postgres "$PGDATA"; chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]; then
    echo 'POSTGRES_PASSWORD is unset (or set POSTGRES_HOST_AUTH_METHOD=trust)' >&2; exit 1
  fi
  auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
  # shellcheck disable=SC2086
  # the socket trusted (the init scripts run through it); every TCP address by $auth
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "${POSTGRES_PASSWORD:-}") --auth-local=trust --auth-host="$auth" \
    ${POSTGRES_INITDB_ARGS:-} -D "$PGDATA"
  printf '\nhost all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p ${PGPORT:-5432}" -w start
  export PGUSER="$POSTGRES_USER" PGDATABASE=postgres
  if [ "$POSTGRES_DB" != postgres ]; then psql -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE \"$POSTGRES_DB\""; fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "running $f"; PGDATABASE="$POSTGRES_DB" bash "$f" ;;
      *.sql) echo "running $f"; psql -v ON_ERROR_STOP=1 -d "$POSTGRES_DB" -f "$f" ;;
      *) ;;
    esac
  done
  unset PGUSER PGDATABASE
  pg_ctl -D "$PGDATA" -m fast -w stop
  echo 'PostgreSQL init process complete; ready for start up.'
fi
exec "$@" -c listen_addresses='*'
