#!/usr/bin/env bash
# Runs a command while one busy-looping process per core competes for the CPU (a `stress -c N`
# without the package), then stops exactly those processes. A test that passes only on an idle
# machine is bounded by time somewhere; this is how CI finds it.
#   scripts/ci/under-load.sh npx vitest run test/store/crash-safety.test.ts ...
set -uo pipefail
cores=$(nproc)
pids=()
stop() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; pids=(); }
trap stop EXIT
for _ in $(seq "$cores"); do
  node -e 'for (;;);' &
  pids+=($!)
done
echo "under-load.sh: $cores busy process(es) running: ${pids[*]}" >&2
"$@"
rc=$?
stop
exit $rc
