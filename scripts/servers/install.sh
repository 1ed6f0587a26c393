#!/usr/bin/env bash
# Installs the Debian packages of the servers the store's tests use. Idempotent; needs root.
# --if-possible (what `npm test` runs first): without root or apt, say what is missing and go on;
# the tests that need a missing server then fail with the reason (or skip with CAIRN_SKIP_*=1).
set -euo pipefail
soft=0
[ "${1:-}" = "--if-possible" ] && soft=1
# One `apt-get update` a run, however many groups below need packages (each takes 10-30 s on CI).
updated=0
apt_update() { [ $updated = 1 ] || apt-get update -qq; updated=1; }
# The HTML report's browser tests drive Debian's chromium (no browser download).
if ! command -v chromium >/dev/null 2>&1 && [ "${CAIRN_SKIP_BROWSER:-}" != 1 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install.sh: installing chromium (Debian package, first run only)" >&2
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "install.sh: cannot install chromium here (needs root and apt-get); run: sudo bash scripts/servers/install.sh, or set CAIRN_SKIP_BROWSER=1" >&2
    [ $soft = 1 ] || exit 1
  fi
fi
# The shell-completion tests load the completion scripts in zsh and fish (they skip, saying so, without them).
shells=()
command -v zsh >/dev/null 2>&1 || shells+=(zsh)
command -v fish >/dev/null 2>&1 || shells+=(fish)
if [ ${#shells[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install.sh: installing ${shells[*]} (Debian packages, first run only)" >&2
  apt_update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${shells[@]}" >/dev/null || echo "install.sh: could not install ${shells[*]}; their completion tests skip" >&2
fi
[ "${CAIRN_SKIP_SERVERS:-}" = 1 ] && [ $soft = 1 ] && exit 0
need=()
command -v radosgw >/dev/null 2>&1 || need+=(radosgw ceph-mon ceph-osd)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql-15)
command -v git >/dev/null 2>&1 || need+=(git)
# ceph-up.sh creates the test bucket with curl's SigV4 signing.
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install.sh: cannot install ${need[*]} here (needs root and apt-get); run: sudo bash scripts/servers/install.sh" >&2
    exit $((1 - soft))
  fi
  echo "install.sh: installing ${need[*]} (Debian packages, first run only)" >&2
  apt_update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
