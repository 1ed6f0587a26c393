#!/usr/bin/env bash
# Stops what ceph-up.sh DIR started (radosgw, then the OSD, then the monitor). Safe to run twice.
# usage: ceph-down.sh DIR   (the data was in memory; DIR keeps the logs and is not removed)
set -uo pipefail
C=${1:?usage: ceph-down.sh DIR}
pids=()
for name in client.rgw osd.0 mon.a; do
  f="$C/run/$name.pid"
  [ -f "$f" ] || continue
  p=$(cat "$f")
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then kill "$p" 2>/dev/null && pids+=("$p"); fi
done
# Bounded wait (the OSD takes a few seconds to exit), then force.
for _ in $(seq 1 40); do
  alive=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && exit 0
  sleep 0.25
done
for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
exit 0
