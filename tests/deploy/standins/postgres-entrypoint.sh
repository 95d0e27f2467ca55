#!/bin/sh
# What docker.io/library/postgres's entrypoint does: as root, own the data directory and re-run as
# `postgres`; on an empty data directory, initdb with POSTGRES_USER / POSTGRES_PASSWORD, create
# POSTGRES_DB, listen on every address with password authentication from the network.
set -eu
if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
  user="${POSTGRES_USER:-postgres}"
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA"
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  database="${POSTGRES_DB:-$user}"
  if [ "$database" != postgres ]; then
    createdb --username="$user" "$database"
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop
fi
exec "$@"
