#!/usr/bin/env bash
# Stops what ceph-up.sh DIR started (gateways, then the OSD, then the monitor). Safe to run twice.
# usage: ceph-down.sh DIR   (the data was in memory; DIR keeps the logs and is not removed)
set -uo pipefail
C=${1:?usage: ceph-down.sh DIR}
C=$(cd "$C" 2>/dev/null && pwd) || exit 0  # the absolute path ceph-up.sh gave the daemons
pids=()
# Gateways first (client.rgw and any extra gateway a test started with its pid file here), then
# the OSD, then the monitor.
gateways=()
for f in "$C"/run/*.pid; do
  case "$(basename "$f")" in osd.*|mon.*) ;; *) gateways+=("$f");; esac
done
for f in "${gateways[@]}" "$C/run/osd.0.pid" "$C/run/mon.a.pid"; do
  [ -f "$f" ] || continue
  p=$(cat "$f")
  # Only a daemon of this cluster: a pid file left by a killed daemon may name a reused pid.
  [ -n "$p" ] && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$C/ceph.conf" || continue
  kill "$p" 2>/dev/null && pids+=("$p")
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
