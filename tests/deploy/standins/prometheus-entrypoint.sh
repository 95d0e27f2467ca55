#!/bin/sh
# The official image's binary keeps its TSDB in data/ of the working directory (/prometheus, the
# volume) unless --storage.tsdb.path is given; Debian's build defaults to /var/lib/prometheus.
case " $* " in
  *" --storage.tsdb.path"*) exec /usr/bin/prometheus "$@" ;;
  *) exec /usr/bin/prometheus --storage.tsdb.path=data/ "$@" ;;
esac
