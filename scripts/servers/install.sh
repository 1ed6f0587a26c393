#!/usr/bin/env bash
# Installs the Debian packages of the servers the store's tests use. Idempotent; needs root.
set -euo pipefail
need=()
command -v radosgw >/dev/null 2>&1 || need+=(radosgw ceph-mon ceph-osd)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql-15)
command -v git >/dev/null 2>&1 || need+=(git)
# ceph-up.sh creates the test bucket with curl's SigV4 signing.
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then echo "install.sh: need root to install: ${need[*]}" >&2; exit 1; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
