#!/bin/sh
# Roles of the Visage images; anything else is run as given (e.g. `python manage.py shell`).
set -e
case "$1" in
  web)
    shift
    # Static files go to the data volume (the root file system may be read-only).
    python manage.py collectstatic --noinput --verbosity 0
    # The web server's worker processes write their metrics here and /metrics merges them
    # (prometheus-client multiprocess mode); emptied at start, as counters restart with the processes.
    export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-/tmp/prometheus}"
    rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
    # granian (ASGI) as webapp.serving.web_server_command builds it, the same command `make run`
    # starts: long-polls and event streams wait on the event loop; other requests run Django's sync
    # code, at most WEB_THREADS (default 32) at once per process (README, "Serving"). visage_web
    # replaces itself with granian; options given after `web` go to granian.
    exec python manage.py visage_web --host 0.0.0.0 --port "${PORT:-8000}" \
      --workers "${WEB_CONCURRENCY:-2}" -- "$@"
    ;;
  worker)
    shift
    exec python manage.py visage_worker "$@"
    ;;
  triton)
    shift
    # Triton in this image's own venv (PyTriton is installed there), its log on stdout; the
    # serve plan and model repository on /tmp (the root file system may be read-only).
    exec python -m swap serve --venv /opt/venv --work-dir /tmp/triton --log-file - \
      --models-dir "${VISAGE_MODELS_DIR:-/models}" "$@"
    ;;
  migrate)
    shift
    python manage.py migrate --noinput "$@"
    # The landing page's examples, made by the engine once per installation (kept in S3).
    exec python manage.py visage_examples
    ;;
  *)
    exec "$@"
    ;;
esac
