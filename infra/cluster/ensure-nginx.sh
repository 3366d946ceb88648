#!/usr/bin/env bash
# Installs Debian's nginx when it is missing, non-interactively (`make cluster` and
# `make soak` call it). Root is needed to install; nothing is installed when nginx exists.
# The package's own service is not used (the cluster runs nginx with a config of its own
# in its run directory); if the install started it, it is stopped again.
set -euo pipefail

have_nginx() { command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; }

have_nginx && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "nginx is not installed; install it as root: apt-get update && apt-get install -y nginx" >&2
  exit 1
fi
echo "installing nginx (Debian package)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends nginx >/dev/null
have_nginx || { echo "nginx did not install" >&2; exit 1; }
# On machines where the package's postinst started the stock service (port 80), stop it.
if [ -s /run/nginx.pid ]; then /usr/sbin/nginx -s quit 2>/dev/null || true; fi
