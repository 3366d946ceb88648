# redis:7 when no registry answers (images.sh): Debian's redis-server (7.0) run as the
# official image runs it: in /data, as user redis, protected mode off (no bind, no password
# by default: the network decides who reaches it).
ARG BASE=tributary-base/debian:bookworm
FROM ${BASE}
RUN set -eux; apt-get update; apt-get install -y redis-server; rm -rf /var/lib/apt/lists/*; \
  mkdir -p /data; chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /data
WORKDIR /data
ENTRYPOINT ["docker-entrypoint.sh"]
EXPOSE 6379
CMD ["redis-server"]
