# postgres:15 when no registry answers (images.sh): Debian's postgresql-15 with an entrypoint
# doing what the official image's does for compose.yaml and the tests (initdb on first start
# with POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, /docker-entrypoint-initdb.d, PGDATA).
ARG BASE=tributary-base/debian:bookworm
FROM ${BASE}
RUN set -eux; apt-get update; apt-get install -y postgresql-common; \
  sed -ri 's/#(create_main_cluster) .*$/\1 = false/' /etc/postgresql-common/createcluster.conf; \
  apt-get install -y postgresql-15; rm -rf /var/lib/apt/lists/*; \
  mkdir -p /var/run/postgresql /docker-entrypoint-initdb.d; chown postgres:postgres /var/run/postgresql; chmod 2777 /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
# as the official image: a user other than root (compose's replica) may create the cluster here
RUN mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 1777 "$PGDATA"
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME /var/lib/postgresql/data
ENTRYPOINT ["docker-entrypoint.sh"]
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
