#!/usr/bin/env bash
# Upstream Datarim stage-snapshot writer's approach, re-implemented from its description
# (upstream-notes § 3) for the contention benchmark: a mkdir lock retried with `sleep 1` until
# DR_SNAPSHOT_LOCK_TIMEOUT, frontmatter rendered with printf, size_bytes solved by re-rendering,
# temp file + chmod 600 + fsync (dd conv=fsync) + mv -f, lock removed in an EXIT trap.
#   upstream-stage-writer.sh ROOT TASK BODY_FILE
set -euo pipefail
root=$1 task=$2 body=$3
dir="$root/datarim/snapshots"
mkdir -p "$dir"
chmod 700 "$dir"
lock="$dir/.lock.$task"
timeout=${DR_SNAPSHOT_LOCK_TIMEOUT:-60}
waited=0
until mkdir "$lock" 2>/dev/null; do
  if (( waited >= timeout )); then echo "lock timeout (${timeout}s) on $lock" >&2; exit 3; fi
  sleep 1
  waited=$((waited + 1))
done
trap 'rmdir "$lock" 2>/dev/null || true' EXIT INT TERM
final="$dir/$task.snapshot.md"
tmp="$final.tmp.$$"
captured_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
render() {
  printf -- '---\ntask_id: %s\nartifact: stage-snapshot\nschema_version: 1\nstage: do\ncommand: /dr-do\ncaptured_at: %s\ncaptured_by: agent\nrecommended_next: /dr-qa\noptions:\nsize_bytes: %s\ntruncated: false\n---\n\n' "$task" "$captured_at" "$1"
}
body_bytes=$(wc -c < "$body")
size=0
for _ in 1 2 3 4 5 6 7 8; do
  fm_bytes=$(render "$size" | wc -c)
  next=$((fm_bytes + body_bytes))
  [ "$next" = "$size" ] && break
  size=$next
done
{ render "$size"; cat "$body"; } > "$tmp"
chmod 600 "$tmp"
dd if=/dev/null of="$tmp" conv=notrunc,fsync status=none
mv -f "$tmp" "$final"
