#!/usr/bin/env bash
# Starts a throw-away PostgreSQL 15 server on loopback (trust auth, TCP 127.0.0.1:PORT and a unix
# socket in DIR) and creates database `cairn`. As root, the server runs as the `postgres` user
# (initdb and pg_ctl refuse root).
#
# usage: pg-up.sh DIR [PORT]     stop with pg-down.sh DIR
# Prints, as the last line, the CAIRN_PG_URL to use. Logs are in DIR/pg.log.
set -euo pipefail
D=${1:?usage: pg-up.sh DIR [PORT]}
PORT=${2:-15432}
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$BIN/initdb" ] || { echo "pg-up.sh: $BIN/initdb not found; run: bash scripts/servers/install.sh" >&2; exit 1; }
case "$D" in /|"") echo "pg-up.sh: refusing DIR '$D'" >&2; exit 1;; esac
if [ -d "$D" ] && [ -n "$(ls -A "$D")" ] && [ ! -f "$D/data/PG_VERSION" ]; then
  echo "pg-up.sh: $D is not empty and holds no data/PG_VERSION; pass an empty or new directory" >&2; exit 1
fi
mkdir -p "$D"; D=$(cd "$D" && pwd)
if [ "$(id -u)" = 0 ]; then
  chown postgres:postgres "$D"
  as_pg() { runuser -u postgres -- "$@"; }
  as_pg test -w "$D" || { echo "pg-up.sh: user postgres cannot write $D (is a parent directory private? chmod 755 it)" >&2; exit 1; }
else
  as_pg() { "$@"; }
fi
if [ -f "$D/data/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$D/data" status >/dev/null 2>&1; then
  echo "pg-up.sh: a server is already running in $D; stop it first with pg-down.sh $D" >&2; exit 1
fi
if [ ! -f "$D/data/PG_VERSION" ]; then
  as_pg "$BIN/initdb" -D "$D/data" -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 >"$D/initdb.log" 2>&1 \
    || { echo "pg-up.sh: initdb failed:" >&2; tail -n 20 "$D/initdb.log" >&2; exit 1; }
fi
# fsync off only speeds up a throw-away test server; synchronous_commit stays on so an immediate
# stop (the fault test) never loses a commit the client was told about.
as_pg "$BIN/pg_ctl" -D "$D/data" -l "$D/pg.log" -w -t 60 \
  -o "-k $D -p $PORT -h 127.0.0.1 -c fsync=off -c full_page_writes=off -c listen_addresses=127.0.0.1" start >/dev/null \
  || { echo "pg-up.sh: server did not start on 127.0.0.1:$PORT (port taken?):" >&2; tail -n 20 "$D/pg.log" >&2; exit 1; }
if ! as_pg "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname='cairn'" | grep -q 1; then
  as_pg "$BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres cairn \
    || { echo "pg-up.sh: createdb cairn failed" >&2; exit 1; }
fi
echo "postgres ready on 127.0.0.1:$PORT (logs in $D/pg.log)"
echo "CAIRN_PG_URL='postgres://postgres@127.0.0.1:$PORT/cairn'"
