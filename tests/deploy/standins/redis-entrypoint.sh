#!/bin/sh
# What docker.io/library/redis's entrypoint does: as root, own /data (the working directory) and
# run as `redis`. Its build turns protected mode off by default; Debian's does not, so say it first
# (any later --protected-mode of the command wins).
set -eu
if [ "$1" = redis-server ]; then
  shift
  set -- redis-server --protected-mode no "$@"
  if [ "$(id -u)" = 0 ]; then
    chown -R redis:redis .
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
