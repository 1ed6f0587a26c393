#!/usr/bin/env bash
# Stops the server pg-up.sh DIR started (fast shutdown, bounded wait; then immediate). Safe to run twice.
# usage: pg-down.sh DIR [fast|immediate]
set -uo pipefail
D=${1:?usage: pg-down.sh DIR [fast|immediate]}
MODE=${2:-fast}
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -f "$D/data/postmaster.pid" ] || exit 0
if [ "$(id -u)" = 0 ]; then as_pg() { runuser -u postgres -- "$@"; }; else as_pg() { "$@"; }; fi
as_pg "$BIN/pg_ctl" -D "$D/data" -m "$MODE" -w -t 30 stop >/dev/null 2>&1 \
  || as_pg "$BIN/pg_ctl" -D "$D/data" -m immediate -w -t 10 stop >/dev/null 2>&1
exit 0
