#!/bin/sh
# `minio server DIR [--console-address ADDR] [--address ADDR]` -> SeaweedFS's `weed mini` with
# its S3 API on :9000 (or --address's port) and MINIO_ROOT_USER / MINIO_ROOT_PASSWORD as the key.
# No console: --console-address is accepted and ignored.
set -eu
if [ "$1" = server ]; then
  shift
  dir=/data
  port=9000
  while [ $# -gt 0 ]; do
    case "$1" in
      --console-address) shift ;;
      --address) shift; port="${1##*:}" ;;
      -*) ;;
      *) dir="$1" ;;
    esac
    shift
  done
  export AWS_ACCESS_KEY_ID="${MINIO_ROOT_USER:?MINIO_ROOT_USER must be set}"
  export AWS_SECRET_ACCESS_KEY="${MINIO_ROOT_PASSWORD:?MINIO_ROOT_PASSWORD must be set}"
  exec weed mini -dir="$dir" -s3.port="$port" -ip=127.0.0.1 -ip.bind=0.0.0.0
fi
exec "$@"
