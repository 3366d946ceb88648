# nginx:1.22 when no registry answers (images.sh): Debian's nginx (1.22), logs on the
# container's output, in the foreground, as the official image runs it.
ARG BASE=tributary-base/debian:bookworm
FROM ${BASE}
RUN set -eux; apt-get update; apt-get install -y nginx-light || apt-get install -y nginx; rm -rf /var/lib/apt/lists/*; \
  rm -f /etc/nginx/sites-enabled/default; \
  ln -sf /dev/stdout /var/log/nginx/access.log; ln -sf /dev/stderr /var/log/nginx/error.log
STOPSIGNAL SIGQUIT
EXPOSE 80
CMD ["nginx", "-g", "daemon off;"]
