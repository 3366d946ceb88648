#!/bin/bash
# As the official redis image: options alone run redis-server; as root, own /data and go on
# as redis. Protected mode off first (later arguments win), as the official build is.
set -euo pipefail
if [ "${1:0:1}" = '-' ] || [ "${1%.conf}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
  shift; set -- redis-server --protected-mode no "$@"
  if [ "$(id -u)" = 0 ]; then
    chown -R redis:redis /data 2>/dev/null || true
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
